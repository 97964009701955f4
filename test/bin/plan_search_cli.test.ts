import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSystemHandler, tf } from 'poptfjs';
import { runProgram } from '../run_program.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-plan-search-'));
const savedModel = join(dir, 'saved');
const PLANNING = fileURLToPath(new URL('../fixtures/onnx/planning/', import.meta.url));

/** Six dense layers of width 256. */
function mlp(): tf.LayersModel {
  const layers = Array.from({ length: 6 }, (_, i) => tf.layers.dense({ units: 256, activation: 'relu', name: `dense_${i}`, ...(i === 0 ? { inputShape: [256] } : {}) }));
  return tf.sequential({ layers });
}

beforeAll(async () => {
  const model = mlp();
  await model.save(fileSystemHandler(savedModel));
  model.dispose();
  // An IPU of 32 tiles × 64 KiB: the model with Adam fits only pipelined.
  writeFileSync(join(dir, 'small.conf'), 'ipuTarget({"tiles": 32, "memoryPerTile": 65536})\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  return runProgram('bin/poptfjs.ts', args);
}

describe('npx poptfjs plan --search', () => {
  it('prints the configurations that fit ranked by throughput, why the best wins, and the best as a config file that plans as found', async () => {
    const reports = join(dir, 'reports');
    const args = ['plan', savedModel, '--search', '--batch', '64', '--ipus', '4', '--loss', 'mse', '--optimizer', 'adam', '--config', join(dir, 'small.conf')];
    const { status, stdout, stderr } = cli(...args, '--report', reports);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^autoPlan: \d+ of \d+ configuration\(s\) fit 4 IPU\(s\) at a global batch of 64 \(\d+ trace\(s\), [\d.]+ s\)$/m);
    expect(stdout).toMatch(/^best: \d IPU\(s\) × \d replica\(s\), stages \[[\d,]+\], micro-batch \d+, accumulation \d+, /m);
    expect(stdout).toMatch(/^ {2}Not faster because it does not fit: /m);
    const ranked = [...stdout.matchAll(/^ {2}\d+\. ([\d.]+) samples\/s: /gm)].map((m) => Number(m[1]));
    expect(ranked.length).toBeGreaterThan(1);
    expect(ranked).toEqual([...ranked].sort((a, b) => b - a));
    // The best as a config file: given to --config at the best's micro-batch, it plans the model at the throughput the search found.
    const microBatch = stdout.match(/the micro-batch is (\d+)\):/)![1]!;
    const config = stdout.slice(stdout.indexOf('):\n', stdout.indexOf('the micro-batch is')) + 3);
    expect(config).toMatch(/^setExecutionStrategy\(PipelinedExecution\(Stage\("dense_0"/m);
    const path = join(dir, 'best.conf');
    writeFileSync(path, config);
    const again = cli('plan', savedModel, '--batch', microBatch, '--loss', 'mse', '--optimizer', 'adam', '--config', path);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^fits on \\d IPU\\(s\\) per replica; ${ranked[0]!.toFixed(1).replace('.', '\\.')} samples/s`, 'm'));
    // The search's report, and the best's own, each named on stderr.
    const written = [...stderr.matchAll(/^poptfjs plan: wrote (.+)$/gm)].map((m) => m[1]!);
    expect(written.map((f) => f.slice(reports.length + 1)).sort()).toEqual(
      ['sequential_\\d+-search.html', 'sequential_\\d+-search.json', 'sequential_\\d+-training.html', 'sequential_\\d+-training.json', 'sequential_\\d+-training.trace.json']
        .map((f) => expect.stringMatching(new RegExp(`^${f}$`)))
        .sort(),
    );
    for (const file of written) expect(existsSync(file)).toBe(true);
    expect(readFileSync(written.find((f) => f.endsWith('-search.html'))!, 'utf8')).toContain('<line class="capacity"');
  });

  it('exits with 1 when no configuration fits, and refuses the flags it chooses itself', () => {
    writeFileSync(join(dir, 'tiny.conf'), 'ipuTarget({"tiles": 2, "memoryPerTile": 4096})\n');
    const none = cli('plan', savedModel, '--search', '--batch', '8', '--ipus', '2', '--inference', '--config', join(dir, 'tiny.conf'));
    expect(none.status).toBe(1);
    expect(none.stdout).toMatch(/^no configuration fits$/m);
    for (const flag of ['--replicas', '--accumulation', '--device-iterations']) {
      const { status, stderr } = cli('plan', savedModel, '--search', '--batch', '8', '--inference', flag, '2');
      expect(status).toBe(2);
      expect(stderr).toContain(`plan: --search chooses the ${flag.slice(2).replace('-', ' ')} itself; leave out ${flag}`);
    }
  });
});

describe('npx poptfjs plan model.onnx', () => {
  it("plans an ONNX model for inference without its weights, pipelined as PopART's attributes place it", () => {
    const { status, stdout, stderr } = cli('plan', join(PLANNING, 'mlp_pipelined.onnx'), '--batch', '8');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout).toMatch(/^Model '\S+' compiled for inference, on 2 IPU\(s\)$/m);
    // Two Linear(64, 64) layers on each IPU; two micro-batches a call, one for each stage.
    expect(stdout).toMatch(/^ {2}0 {4}[\d.]+ KiB +[\d.]+% +32\.5 KiB /m);
    expect(stdout).toMatch(/^ {2}1 {4}[\d.]+ KiB +[\d.]+% +32\.5 KiB /m);
    expect(stdout).toMatch(/^fits on 2 IPU\(s\) per replica; [\d.]+ samples\/s, 16 samples a call in [\d.]+ ms \(simulated\)$/m);
    // With --float16, as model.half(): two bytes a weight.
    const half = cli('plan', join(PLANNING, 'mlp_pipelined.onnx'), '--batch', '8', '--float16');
    expect(half.status).toBe(0);
    expect(half.stdout).toMatch(/^ {2}0 {4}[\d.]+ KiB +[\d.]+% +16\.3 KiB /m);
  });

  it('splits one whose external data file is missing over --ipus stages, and writes its reports', () => {
    const reports = join(dir, 'onnx-reports');
    const { status, stdout, stderr } = cli('plan', join(PLANNING, 'tiny_encoder_external.onnx'), '--batch', '4', '--ipus', '2', '--report', reports);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^PipelinedExecution: 2 stage\(s\) on 2 IPU\(s\) per replica/m);
    expect(stdout).toMatch(/^fits on 2 IPU\(s\) per replica; [\d.]+ samples\/s, 8 samples a call/m);
    for (const ext of ['html', 'json', 'trace.json']) expect(stderr).toContain(`poptfjs plan: wrote ${join(reports, `torch_jit-inference.${ext}`)}\n`);
  });

  it('plans a training step of a model exported with its loss, named by --loss-tensor, pipelined over --ipus', () => {
    const { status, stdout, stderr } = cli('plan', join(PLANNING, 'mlp_with_loss.onnx'), '--batch', '8', '--loss-tensor', 'loss', '--optimizer', 'adam', '--ipus', '2');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout).toMatch(/^Model '\S+' compiled for training, on 2 IPU\(s\)$/m);
    expect(stdout).toMatch(/^PipelinedExecution: 2 stage\(s\) on 2 IPU\(s\) per replica/m);
    // A 2-stage training pipeline needs 3 micro-batches a step: the accumulation is raised to them.
    expect(stdout).toMatch(/^schedule over 3 micro-batch\(es\)/m);
    expect(stdout).toMatch(/^fits on 2 IPU\(s\) per replica; [\d.]+ samples\/s, 24 samples a call/m);
  });

  it('refuses the flags of a tfjs model, and training flags without a loss tensor, with a usage error', () => {
    for (const [model, flag, message] of [
      ['mlp_pipelined.onnx', ['--loss', 'mse'], 'an ONNX model exported with its loss names its loss tensor with --loss-tensor'],
      ['mlp_pipelined.onnx', ['--search', '--replicas', '2'], '--search chooses the replicas itself; leave out --replicas'],
      ['mlp_pipelined.onnx', ['--optimizer', 'adam'], '--optimizer needs --loss-tensor'],
      ['mlp_with_loss.onnx', ['--loss-tensor', 'loss', '--inference'], '--loss-tensor plans a training step; leave out --inference'],
    ] as const) {
      const { status, stderr } = cli('plan', join(PLANNING, model), '--batch', '8', ...flag);
      expect(status).toBe(2);
      expect(stderr).toContain(message);
    }
    const saved = cli('plan', savedModel, '--batch', '8', '--loss-tensor', 'loss');
    expect(saved.status).toBe(2);
    expect(saved.stderr).toContain('--loss-tensor names the loss tensor of an ONNX model; a saved tfjs model takes --loss');
  });

  it('searches one with --search, its stages named by its modules, and the best as a config file that plans as found', () => {
    // An IPU of 8 tiles × 64 KiB: the encoder fits only pipelined. It was exported at a batch of 4 without a dynamic
    // batch axis, so every candidate runs micro-batches of 4.
    writeFileSync(join(dir, 'tiny.ipu'), 'ipuTarget({"tiles": 8, "memoryPerTile": 65536})\n');
    const model = join(PLANNING, 'tiny_encoder_external.onnx');
    const { status, stdout, stderr } = cli('plan', model, '--search', '--batch', '16', '--ipus', '4', '--config', join(dir, 'tiny.ipu'));
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout).toMatch(/^best: 4 IPU\(s\) × 1 replica\(s\), stages \[[\d,]+\], micro-batch 4, /m);
    const found = Number(stdout.match(/^ {2}1\. ([\d.]+) samples\/s: /m)![1]);
    const config = stdout.slice(stdout.indexOf('):\n', stdout.indexOf('the micro-batch is')) + 3);
    expect(config).toMatch(/^setExecutionStrategy\(PipelinedExecution\(Stage\("\/embedding", "\/encoder\/layers\.0\/self_attn"/m);
    const path = join(dir, 'onnx-best.conf');
    writeFileSync(path, config);
    const again = cli('plan', model, '--batch', '4', '--config', path);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^fits on 4 IPU\\(s\\) per replica; ${found.toFixed(1).replace('.', '\\.')} samples/s`, 'm'));
  });

  it('names the graph outputs when --loss-tensor names no tensor of the model', () => {
    const { status, stderr } = cli('plan', join(PLANNING, 'mlp_with_loss.onnx'), '--batch', '8', '--loss-tensor', 'logits');
    expect(status).toBe(1);
    expect(stderr).toContain("plan: the loss 'logits' is no tensor of the model; its graph outputs: 'loss'");
  });
});
