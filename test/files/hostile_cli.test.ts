/**
 * The command-line tool on hostile files and flags: each case ends within
 * seconds with one line `poptfjs: ...` naming what is wrong and exit status
 * 1, without a stack trace unless `--verbose` asks for one. The processes
 * run side by side, each with a timeout that a hang would reach.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSystemHandler, tf } from 'poptfjs';
import { ROOT } from '../run_program.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-hostile-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Generous for a loaded machine; a command that hangs reaches it. */
const TIMEOUT_MS = 120_000;

interface Outcome {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `poptfjs <args>` in a process of its own, killed if it outlives {@link TIMEOUT_MS}. */
function cli(...args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/poptfjs.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, POPTFJS_IPU_LOCK_DIR: mkdtempSync(join(dir, 'ipus-')) },
      timeout: TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

/** Expects the one line of a refusal: `poptfjs: ` and `message`, exit status 1, no stack. */
function refusedWith(outcome: Outcome, message: string): void {
  expect(outcome.signal).toBeNull();
  expect(outcome.stderr).toBe(`poptfjs: ${message}\n`);
  expect(outcome.status).toBe(1);
}

const model = join(dir, 'model');
const cache = join(dir, 'cache');

beforeAll(async () => {
  const x = tf.input({ shape: [6], name: 'x' });
  const a = tf.layers.dense({ units: 4, name: 'a' }).apply(x) as tf.SymbolicTensor;
  const b = tf.layers.dense({ units: 4, name: 'b' }).apply(a) as tf.SymbolicTensor;
  await tf.model({ inputs: x, outputs: b, name: 'fn' }).save(fileSystemHandler(model));
  mkdirSync(cache);
  mkdirSync(join(cache, `${'a'.repeat(64)}.poptfjs`));
  symlinkSync(join(dir, 'nothing'), join(cache, `${'b'.repeat(64)}.poptfjs`));
  execFileSync('mkfifo', [join(cache, `${'c'.repeat(64)}.poptfjs`), join(dir, 'fifo.poptfjs'), join(dir, 'fifo.conf')]);
});

/** A copy of the saved model with its model.json changed by `change`. */
function variant(name: string, change: (json: Record<string, unknown> & { modelTopology: { config: { layers: Array<Record<string, unknown>> } } }) => void): string {
  const folder = join(dir, name);
  mkdirSync(folder);
  for (const file of readdirSync(model)) if (file.endsWith('.bin')) writeFileSync(join(folder, file), readFileSync(join(model, file)));
  const json = JSON.parse(readFileSync(join(model, 'model.json'), 'utf8'));
  change(json);
  writeFileSync(join(folder, 'model.json'), JSON.stringify(json));
  return join(folder, 'model.json');
}

describe('npx poptfjs on hostile files and flags', () => {
  it(
    'answers each with one line and exit status 1 within seconds, naming the file and what is wrong',
    async () => {
      const cycle = variant('cycle', (j) => {
        j.modelTopology.config.layers[1]!.inbound_nodes = [[['b', 0, 0, {}]]];
      });
      const units = variant('units', (j) => {
        (j.modelTopology.config.layers[1]!.config as Record<string, unknown>).units = -3;
      });
      const fifoModel = join(dir, 'fifo-model');
      mkdirSync(fifoModel);
      execFileSync('mkfifo', [join(fifoModel, 'model.json')]);
      const plan = ['--batch', '2', '--inference'];
      const [cycled, fifo, config, inspectFifo, inspectZero, optimizer, tfjsError, verbose] = await Promise.all([
        cli('plan', cycle, ...plan),
        cli('plan', fifoModel, ...plan),
        cli('plan', model, ...plan, '--config', join(dir, 'fifo.conf')),
        cli('inspect', join(dir, 'fifo.poptfjs')),
        cli('inspect', '/dev/zero'),
        cli('plan', model, '--batch', '2', '--loss', 'meanSquaredError', '--optimizer', 'constructor'),
        cli('plan', units, ...plan),
        cli('plan', units, ...plan, '--verbose'),
      ]);
      refusedWith(cycled, `${cycle}: layers 'a' → 'b' → 'a' read each other's outputs in a cycle: no order computes them`);
      refusedWith(fifo, `cannot read ${join(fifoModel, 'model.json')}: it is a FIFO (named pipe), not a regular file`);
      refusedWith(config, `${join(dir, 'fifo.conf')}:1:1: cannot read the options file: it is a FIFO (named pipe), not a regular file`);
      refusedWith(inspectFifo, `cannot read ${join(dir, 'fifo.poptfjs')}: it is a FIFO (named pipe), not a regular file`);
      refusedWith(inspectZero, 'cannot read /dev/zero: it is a character device, not a regular file');
      // A name on Object.prototype is no optimizer: a usage error (exit status 2), as any unknown name.
      expect(optimizer.stderr).toBe("poptfjs: plan: --optimizer takes sgd, adam, adamw, rmsprop, lamb (in any case), got 'constructor'\n(see 'poptfjs plan --help')\n");
      expect(optimizer.status).toBe(2);
      refusedWith(tfjsError, `${units}: tfjs cannot build the model it describes: Expected units to be a positive integer, but got -3.`);
      // --verbose adds where the error was raised.
      expect(verbose.status).toBe(1);
      expect(verbose.stderr).toMatch(/^poptfjs: PoptfjsError: .*Expected units to be a positive integer, but got -3\.\n {4}at /);
    },
    TIMEOUT_MS + 60_000,
  );

  it(
    'plans huge batches, accumulations and device iterations without growing with them, and refuses a batch beyond a dimension',
    async () => {
      const [batch, accumulation, iterations, beyond] = await Promise.all([
        cli('plan', model, '--batch', '400000000', '--inference'),
        cli('plan', model, '--batch', '2', '--accumulation', '1000000000', '--loss', 'meanSquaredError'),
        cli('plan', model, '--batch', '2', '--device-iterations', '1000000000', '--inference'),
        cli('plan', model, '--batch', '2147483648', '--inference'),
      ]);
      // 4e8 × 6 float32 inputs take 9.6 GB: planned with shapes only, it does not fit one IPU (exit status 1).
      expect(batch.stderr).toBe('');
      expect(batch.stdout).toMatch(/^does NOT fit on 1 IPU\(s\) per replica; [\d.]+ samples\/s, 400000000 samples a call in [\d.]+ ms \(simulated\)$/m);
      expect(batch.status).toBe(1);
      for (const run of [accumulation, iterations]) {
        expect(run.stderr).toBe('');
        expect(run.stdout).toMatch(/^fits on 1 IPU\(s\) per replica; [\d.]+ samples\/s, 2000000000 samples a call in [\d.]+ ms \(simulated\)$/m);
        expect(run.status).toBe(0);
      }
      expect(beyond.stderr).toBe('poptfjs: plan: --batch takes a positive integer up to 2147483647 (a tensor dimension), got 2147483648\n');
      expect(beyond.status).toBe(2);
    },
    TIMEOUT_MS + 60_000,
  );

  it(
    'lists and clears a cache directory holding a directory, a link to nothing and a FIFO where entries should be',
    async () => {
      const ls = await cli('cache', 'ls', cache);
      expect(ls.stderr).toBe('');
      expect(ls.status).toBe(0);
      expect(ls.stdout).toContain(`${'a'.repeat(64)}.poptfjs  unreadable: it is a directory, not a regular file`);
      expect(ls.stdout).toContain(`${'b'.repeat(64)}.poptfjs  unreadable: it is a symbolic link to nothing, not a regular file`);
      expect(ls.stdout).toContain(`${'c'.repeat(64)}.poptfjs  unreadable: it is a FIFO (named pipe), not a regular file`);
      const clear = await cli('cache', 'clear', cache);
      expect(clear.stderr).toBe('');
      expect(clear.status).toBe(0);
      expect(clear.stdout).toBe(`removed 2 entries (0 bytes) from ${cache}; kept the directory ${join(cache, `${'a'.repeat(64)}.poptfjs`)} (not entries)\n`);
      expect(readdirSync(cache)).toEqual([`${'a'.repeat(64)}.poptfjs`]);
    },
    TIMEOUT_MS + 60_000,
  );
});
