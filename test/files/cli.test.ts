import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describePoptfjsFile, fileSystemHandler, inferenceModel, Options, tf, trainingModel } from 'poptfjs';
import { ROOT, runProgram } from '../run_program.js';
import { linearModel, sample } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-cli-'));
const exported = join(dir, 'model.poptfjs');
const checkpoint = join(dir, 'state.ckpt');
const cacheDir = join(dir, 'cache');
const savedModel = join(dir, 'saved');

beforeAll(async () => {
  const [x, y] = sample();
  const exporter = trainingModel(linearModel(), { options: new Options().useOfflineIpuTarget(2).deviceIterations(1), loss: 'meanSquaredError' });
  await exporter.compileAndExport(exported, x, y);
  exporter.destroy();
  const trainer = trainingModel(linearModel(), { loss: 'meanSquaredError' });
  tf.dispose(await trainer(x, y));
  trainer.saveCheckpoint(checkpoint);
  trainer.destroy();
  const cached = inferenceModel(linearModel(4), { options: new Options().enableExecutableCaching(cacheDir) });
  await cached.compile(x);
  cached.destroy();
  const saved = tf.sequential({
    layers: [
      tf.layers.conv2d({ filters: 16, kernelSize: 3, activation: 'relu', inputShape: [32, 32, 3], name: 'conv' }),
      tf.layers.flatten({ name: 'flatten' }),
      tf.layers.dense({ units: 64, activation: 'relu', name: 'hidden' }),
      tf.layers.dense({ units: 10, name: 'logits' }),
    ],
  });
  await saved.save(fileSystemHandler(savedModel));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  return runProgram('bin/poptfjs.ts', args);
}

describe('npx poptfjs inspect', () => {
  it('prints what an exported executable holds, without running it', () => {
    const { status, stdout, stderr } = cli('inspect', exported);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout).toMatch(/^content +exported executable, with its model \(load\(\) restores it\)$/m);
    expect(stdout).toMatch(/^poptfjs +0\.\d+\.\d+.* \(content hash verified\)$/m);
    expect(stdout).toMatch(/^model +'sequential_\d+', training$/m);
    expect(stdout).toMatch(/^inputs +input 0: float32\[1,10\], input 1: float32\[1,10\]$/m);
    expect(stdout).toMatch(/^parameters +2 \(440 B\)$/m);
    expect(stdout).toMatch(/^ +offlineIpuVersion: 2$/m);
    expect(stdout).toContain('One IPU (no pipeline), 1 IPU(s) reserved');
    expect(stdout).toContain('Memory per IPU');
  });

  it('refuses a corrupted file with an error naming it, and a non-zero exit status', () => {
    const bytes = readFileSync(exported);
    const broken = join(dir, 'broken.poptfjs');
    writeFileSync(broken, bytes.subarray(0, bytes.length - 7));
    const { status, stdout, stderr } = cli('inspect', broken);
    expect(status).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(`poptfjs: ${broken}: the file is corrupted or truncated`);
  });

  it('describes a checkpoint: parameters, optimizer state, random generator and iterations', () => {
    const text = describePoptfjsFile(checkpoint);
    expect(text).toMatch(/^content +checkpoint$/m);
    expect(text).toMatch(/^iterations +1 device iteration\(s\) run$/m);
    expect(text).toMatch(/^weights +2 parameter\(s\) on 1 replica\(s\)/m);
    expect(text).toMatch(/^random state +\[0x[0-9a-f]{8}, /m);
  });
});

describe('npx poptfjs cache', () => {
  it('lists the entries of a cache directory, then clears them', () => {
    const ls = cli('cache', 'ls', cacheDir);
    expect(ls.status).toBe(0);
    expect(ls.stdout).toMatch(/[0-9a-f]{64}\.poptfjs {2}'sequential_\d+' inference \((wasm|cpu|tensorflow)\)/);
    expect(ls.stdout).toMatch(/^1 entry, \d+ bytes in /m);
    expect(ls.stdout).not.toMatch(/temporary/);
    const clear = cli('cache', 'clear', cacheDir);
    expect(clear.status).toBe(0);
    expect(clear.stdout).toMatch(/^removed 1 entry \(\d+ bytes\) from /m);
  });

  it('lists the temporary file a writer killed mid-write left, with its size, and clears it', () => {
    const killed = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/runtime/killed_writer.ts', join(cacheDir, 'x.poptfjs'), '1234'], { cwd: ROOT });
    expect(killed.signal).toBe('SIGKILL');
    const leftover = join(cacheDir, `.x.poptfjs.${killed.pid}.`);
    const ls = cli('cache', 'ls', cacheDir);
    expect(ls.status).toBe(0);
    expect(ls.stdout).toContain(`      1234 B  ${leftover}`);
    expect(ls.stdout).toMatch(new RegExp(`\\.tmp  temporary file left by process ${killed.pid}, which no longer runs \\(an interrupted write\\)$`, 'm'));
    expect(ls.stdout).toMatch(/^1 temporary file\(s\), 1234 bytes; 'poptfjs cache clear' removes those of interrupted writes$/m);
    const clear = cli('cache', 'clear', cacheDir);
    expect(clear.status).toBe(0);
    expect(clear.stdout).toMatch(/^removed \d+ entr(y|ies) and 1 temporary file\(s\) of interrupted writes \(\d+ bytes\) from /m);
    expect(cli('cache', 'ls', cacheDir).stdout).not.toMatch(/temporary/);
    expect(existsSync(join(cacheDir, 'x.poptfjs'))).toBe(false);
  });
});

describe('npx poptfjs plan', () => {
  it('plans a saved model over IPUs without computing it: memory per IPU, stages of nearly equal time, throughput', () => {
    const { status, stdout, stderr } = cli('plan', join(savedModel, 'model.json'), '--batch', '8', '--ipus', '2', '--loss', 'meanSquaredError', '--optimizer', 'adam');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout).toMatch(/^Model '\S+' compiled for training, on 2 IPU\(s\)$/m);
    expect(stdout).toMatch(/^ {2}0 {4}[\d.]+ [KMG]iB/m);
    expect(stdout).toMatch(/^ {2}1 {4}[\d.]+ [KMG]iB/m);
    expect(stdout).toMatch(/^PipelinedExecution: 2 stage\(s\) on 2 IPU\(s\) per replica/m);
    // The 2-stage pipeline needs at least 3 micro-batches.
    expect(stdout).toMatch(/^schedule over 3 micro-batch\(es\)/m);
    expect(stdout).toMatch(/^fits on 2 IPU\(s\) per replica; [\d.]+ samples\/s, 24 samples a call in [\d.]+ ms \(simulated\)$/m);
  });

  it('takes options from a config file, plans inference, and exits with 1 when the model does not fit', () => {
    const config = join(dir, 'small.json');
    writeFileSync(config, JSON.stringify({ ipuTarget: { tiles: 2, memoryPerTile: 4096 }, deviceIterations: 2 }));
    const { status, stdout } = cli('plan', savedModel, '--batch', '4', '--inference', '--config', config);
    expect(status).toBe(1);
    expect(stdout).toMatch(/compiled for inference, on 1 IPU\(s\)/);
    expect(stdout).toMatch(/OUT OF MEMORY by/);
    expect(stdout).toMatch(/^does NOT fit on 1 IPU\(s\) per replica; [\d.]+ samples\/s, 8 samples a call/m);
  });

  it('says what is wrong with the model or the flags it needs', () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['plan', savedModel, '--batch', '4'], 2, /plan: training needs a loss: give --loss \(meanSquaredError, .*, or mse, mae, mape, msle, kld, cosine\) or plan --inference/],
      [['plan', savedModel, '--batch', '4', '--inference', '--ipus', '9'], 1, /the model has 4 layer\(s\), too few to split over 9 IPUs/],
      [['plan', join(dir, 'missing'), '--batch', '4', '--inference'], 1, /missing/],
    ];
    for (const [args, code, message] of cases) {
      const { status, stderr } = cli(...args);
      expect(status).toBe(code);
      expect(stderr).toMatch(message);
    }
  });

  it('takes a loss by its short name, in any case', () => {
    const { status, stdout } = cli('plan', savedModel, '--batch', '4', '--loss', 'MSE');
    expect(status).toBe(0);
    expect(stdout).toMatch(/^Model '\S+' compiled for training, on 1 IPU\(s\)$/m);
  });
});
