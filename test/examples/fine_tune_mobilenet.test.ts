/**
 * examples/fine-tune-mobilenet.ts: MobileNetV2 fine-tuned at real batch
 * sizes, its losses against plain tfjs, and the host memory it takes.
 */
import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

function run(args: string[]): string {
  const { status, stdout, stderr } = runProgram('examples/fine-tune-mobilenet.ts', args, {}, 600_000);
  expect(stderr).toBe('');
  expect(status).toBe(0);
  return stdout;
}

/** What one single-IPU run printed of its host memory, in MiB. */
function hostMemory(args: string[]): { estimated: number; activations: number; heap: number } {
  const out = run(['--single-ipu', '--steps', '1', ...args]);
  const [, estimated, activations] = /host memory estimated: main thread (\d+) MiB \(activations (\d+) MiB\)/.exec(out)!;
  return { estimated: Number(estimated), activations: Number(activations), heap: Number(/host memory measured: wasm heap (\d+) MiB/.exec(out)![1]) };
}

describe('fine-tune-mobilenet.ts', () => {
  it('fine-tunes at host batch 32 as micro-batches of 4, on one IPU and pipelined over 4 worker IPUs, each micro-batch loss as plain tfjs computes it', {
    timeout: 600_000,
  }, () => {
    const out = run(['--image-size', '96', '--steps', '1']);
    const differences = [...out.matchAll(/largest relative difference: (\S+)/g)].map((m) => Number(m[1]));
    expect(differences).toHaveLength(2);
    for (const d of differences) expect(d).toBeLessThanOrEqual(1e-4);
    const firstSteps = [...out.matchAll(/first step, loss per micro-batch: (.+)/g)].map((m) => m[1]!.trim().split(' ').map(Number));
    const references = [...out.matchAll(/plain tfjs, chunk by chunk: +(.+)/g)].map((m) => m[1]!.trim().split(' ').map(Number));
    expect(firstSteps.map((l) => l.length)).toEqual([8, 8]);
    expect(firstSteps[1]).toEqual(firstSteps[0]);
    for (const [i, losses] of firstSteps.entries()) losses.forEach((loss, k) => expect(loss).toBeCloseTo(references[i]![k]!, 4));
    // Pipelined, each of the 4 IPUs computes in a heap of its own.
    expect(out).toMatch(/worker heaps: IPU 0 \d+ MiB, IPU 1 \d+ MiB, IPU 2 \d+ MiB, IPU 3 \d+ MiB/);
  });

  it('takes the host memory of the micro-batch, not of the host batch', { timeout: 600_000 }, () => {
    const micro4 = hostMemory(['--image-size', '96', '--host-batch', '4', '--micro-batch', '4']);
    const host32 = hostMemory(['--image-size', '96', '--host-batch', '32', '--micro-batch', '4']);
    const micro16 = hostMemory(['--image-size', '96', '--host-batch', '16', '--micro-batch', '16']);
    // Host batch 32 as 8 micro-batches of 4: the activations and the heap of micro-batch 4. Only the inputs
    // (32 × 96 × 96 × 3 floats: 3.4 MiB more) and the accumulated gradients (3.5 M floats: 13.4 MiB) come on top.
    expect(host32.activations).toBe(micro4.activations);
    expect(host32.estimated - micro4.estimated).toBeLessThanOrEqual(18);
    // The wasm heap grows in steps of up to a fifth of its size: within one step of micro-batch 4's.
    expect(host32.heap).toBeLessThanOrEqual(micro4.heap * 1.25);
    // Micro-batches of 16: about four times the activations.
    expect(micro16.heap).toBeGreaterThan(2 * micro4.heap);
    expect(micro16.estimated).toBeGreaterThan(2 * micro4.estimated);
    // The estimate leaves out what the backend holds beyond tensors; it is within a factor of two of the heap.
    for (const m of [micro4, host32, micro16]) {
      expect(m.estimated).toBeLessThan(m.heap);
      expect(m.heap).toBeLessThan(2 * m.estimated);
    }
  });

  it('trains every layer at 224×224, host batch 16 with gradientAccumulation(4)', { timeout: 600_000 }, () => {
    const out = run(['--single-ipu', '--steps', '1', '--host-batch', '16', '--micro-batch', '4']);
    expect(out).toContain('MobileNetV2 at 224×224, host batch 16 as 4 micro-batches of 4');
    expect(Number(/largest relative difference: (\S+)/.exec(out)![1])).toBeLessThanOrEqual(1e-4);
  });
});
