import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

describe('planning examples', () => {
  it('plan-bert-large.ts: BERT-Large does not fit on 1 IPU, fits pipelined on 4 and on 4 × 4 replicas, every weight on some IPU', { timeout: 240_000 }, () => {
    const { status, stdout, stderr } = runProgram('examples/plan-bert-large.ts');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const rows = [
      ...stdout.matchAll(/^(\d+)\s+(\d)\s+(yes|no)\s+IPU \d [\d.]+ GiB (\d+)%\s+(\d+) seq\/s\s+[\d.]+ s\s+([\d.]+) M \(([\d.]+) M\)\s+[\d.]+ s\s+([\d.]+) GiB$/gm),
    ].map((m) => ({
      ipus: Number(m[1]),
      replicas: Number(m[2]),
      fits: m[3] === 'yes',
      fullest: Number(m[4]),
      throughput: Number(m[5]),
      weights: Number(m[6]),
      parameters: Number(m[7]),
      rss: Number(m[8]),
    }));
    expect(rows.map((r) => [r.ipus, r.replicas, r.fits])).toEqual([
      [1, 1, false],
      [4, 1, true],
      [16, 4, true],
    ]);
    for (const r of rows) {
      // BERT-Large: 336 M parameters, all of them held by some IPU.
      expect(r.parameters).toBeCloseTo(336.2, 1);
      expect(r.weights).toBe(r.parameters);
      // Planned with shapes only: the host holds far less than the model's 1.3 GB of float32 weights.
      expect(r.rss).toBeLessThan(1);
    }
    const [one, four, sixteen] = rows;
    expect(one!.fullest).toBeGreaterThan(100);
    expect(four!.throughput).toBeGreaterThan(2 * one!.throughput);
    expect(sixteen!.throughput / four!.throughput).toBeGreaterThan(3.5);
  });

  it('plan-gpt3.ts: the 175 B-parameter decoder on 64 IPUs is planned with its progress on stderr, within 2 GiB of host memory', { timeout: 240_000 }, () => {
    const { status, stdout, stderr } = runProgram('examples/plan-gpt3.ts');
    expect(status).toBe(0);
    // 50257 × 12288 token and 2048 × 12288 position embeddings, 96 layers of 12d² + 13d, the final norm's 2d.
    const d = 12288;
    const parameters = 50257 * d + 2048 * d + 96 * (12 * d * d + 13 * d) + 2 * d;
    expect(stdout).toContain(`GPT-3 with 96 layers (${(parameters / 1e9).toFixed(1)} G parameters) pipelined over 64 IPUs`);
    expect(stdout).toMatch(/^fits: +no$/m);
    const weights = stdout.match(/^weights: +([\d.]+) GiB over the IPUs \(([\d.]+) GiB of float32 parameters\)$/m)!;
    expect(weights[1]).toBe(weights[2]);
    expect(Number(weights[2])).toBeCloseTo((4 * parameters) / 2 ** 30, 1);
    const rss = Number(stdout.match(/host peak RSS ([\d.]+) GiB$/m)![1]);
    expect(rss).toBeLessThan(2);
    const progress = stderr.split('\r');
    expect(progress.some((line) => /^Planning: \[#+\.+\] 1\/6 trace: \d+ kernels traced/.test(line))).toBe(true);
    expect(progress.some((line) => /^Planning: \[#{30}\] 6\/6 memory and time/.test(line))).toBe(true);
  });

  it('auto-plan.ts: the search finds a pipeline for the model one IPU cannot hold, its config file plans the same, and ONNX models plan and search without their weights', {
    timeout: 240_000,
  }, () => {
    const { status, stdout, stderr } = runProgram('examples/auto-plan.ts');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout).toMatch(/^autoPlan: \d+ of \d+ configuration\(s\) fit 8 IPU\(s\) at a global batch of 512 /m);
    // 134 M parameters with Adam (weights, two moments, gradients: over 2 GiB) do not fit one IPU's 897 MiB: the best is a pipeline.
    const best = stdout.match(/^best: (\d) IPU\(s\) × (\d) replica\(s\), stages \[[\d,]+\], micro-batch (\d+), accumulation (\d+), /m);
    expect(Number(best![1])).toBeGreaterThan(1);
    expect(Number(best![1]) * Number(best![2])).toBe(8);
    expect(Number(best![3]) * Number(best![2]) * Number(best![4])).toBe(512);
    const found = stdout.match(/^ {2}1\. ([\d.]+) samples\/s: /m)![1];
    expect(stdout).toMatch(new RegExp(`^planned again from \\S+best\\.conf: fits, ${found!.replace('.', '\\.')} samples/s$`, 'm'));
    expect(stdout).toMatch(/^setExecutionStrategy\(PipelinedExecution\(Stage\("layer0"/m);
    expect(stdout).toMatch(/^ONNX: Plan of 'torch_jit' for inference on 2 IPU\(s\): fits: /m);
    expect(stdout).toMatch(/^ONNX: 113792 parameters, their weights never read$/m);
    expect(stdout).toMatch(/^ONNX ViT-B\/16: autoPlan: \d+ of \d+ configuration\(s\) fit 4 IPU\(s\) at a global batch of 256 /m);
    expect(stdout).toMatch(/^ONNX ViT-B\/16: best: \d IPU\(s\) × \d replica\(s\)/m);
  });
});
