import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

function run(example: string, args: string[] = []): string {
  const { status, stdout, stderr } = runProgram(`examples/${example}.ts`, args);
  expect(stderr).toBe('');
  expect(status).toBe(0);
  return stdout;
}

describe('simulated IPU examples', () => {
  it('will-it-fit.ts: the memory table for 1, 2 and 4 IPUs; only the split placements fit', () => {
    const out = run('will-it-fit');
    expect(out).toContain('=== 1 IPU(s): does NOT fit ===');
    expect(out).toContain('=== 2 IPU(s): fits ===');
    expect(out).toContain('=== 4 IPU(s): fits ===');
    expect(out).toMatch(/IPU 0 is out of memory compiling model '[^']+' at micro-batch 8: it needs [\d.]+ GiB of its 897\.0 MiB/);
    expect(out.match(/^ {2}\d {4}[\d.]+ MiB/gm)).toHaveLength(2 + 4);
  });

  it('recomputation.ts: the model fits only with recomputation, which costs simulated time and changes no number', () => {
    const out = run('recomputation');
    const rows = [...out.matchAll(/^(None|Standard|RecomputeAll \+ checkpoint after layer 8)\s+([\d.]+) MiB\s+([\d.]+) MiB\s+([\d.]+) µs\s+(yes|no)\s+(.+)$/gm)].map((m) => ({
      label: m[1],
      activations: Number(m[2]),
      time: Number(m[4]),
      fits: m[5] === 'yes',
      loss: m[6],
    }));
    expect(rows.map((r) => [r.label, r.fits])).toEqual([
      ['None', false],
      ['Standard', true],
      ['RecomputeAll + checkpoint after layer 8', true],
    ]);
    const [none, standard, checkpointed] = rows;
    expect(none!.loss).toBe('not run: does not fit');
    expect(standard!.loss).toMatch(/^\d\.\d{6}$/);
    expect(checkpointed!.loss).toBe(standard!.loss);
    for (const r of [standard!, checkpointed!]) {
      expect(r.activations).toBeLessThan(none!.activations);
      expect(r.time).toBeGreaterThan(none!.time);
    }
  });

  it('pipeline-timeline.ts: throughput and bubble; more micro-batches shrink the bubble', () => {
    const out = run('pipeline-timeline');
    const rows = [...out.matchAll(/^(\d)\s+(\d+)\s+(\d+)\s+([\d.]+)%/gm)].map((m) => ({
      ipus: Number(m[1]),
      accumulation: Number(m[2]),
      throughput: Number(m[3]),
      bubble: Number(m[4]),
    }));
    expect(rows).toHaveLength(5);
    const at = (ipus: number, accumulation: number) => rows.find((r) => r.ipus === ipus && r.accumulation === accumulation)!;
    expect(at(1, 8).bubble).toBe(0);
    expect(at(4, 32).bubble).toBeLessThan(at(4, 8).bubble);
    expect(at(2, 32).bubble).toBeLessThan(at(2, 8).bubble);
    expect(at(4, 32).throughput).toBeGreaterThan(at(1, 8).throughput);
  });

  it('overlapped-io.ts: only the marked transfers overlap, the device-iteration loop saves time, the outputs do not change', () => {
    const out = run('overlapped-io');
    const rows = [...out.matchAll(/^(.+?)\s{2,}([\d.]+)\s+(\d+)\s+(-|[\d.]+ MiB)\s+(-?[\d.]+)$/gm)].map((m) => ({
      label: m[1]!,
      ms: Number(m[2]),
      buffers: m[4],
      checksum: m[5],
    }));
    expect(rows.map((r) => r.label)).toEqual([
      'no I/O tiles',
      '64 I/O tiles, nothing marked',
      '64 I/O tiles, OverlapAccumulationLoop',
      '64 I/O tiles, OverlapDeviceIterationLoop',
    ]);
    const [none, unmarked, accumulation, deviceIterations] = rows;
    // Unmarked, the I/O tiles only take tiles from compute; in inference the accumulation loop has one micro-batch.
    expect(unmarked!.ms).toBeGreaterThanOrEqual(none!.ms);
    expect(accumulation!.ms).toBe(unmarked!.ms);
    expect(deviceIterations!.ms).toBeLessThan(0.8 * unmarked!.ms);
    // Two micro-batches of 32 × 2048 float32 (256 KiB) in and out.
    expect([none!.buffers, unmarked!.buffers, accumulation!.buffers, deviceIterations!.buffers]).toEqual(['-', '0.0 MiB', '1.0 MiB', '1.0 MiB']);
    expect(new Set(rows.map((r) => r.checksum)).size).toBe(1);
  });

  it("multi-conv.ts: a parallel group is faster than a serial one; dithering spreads the serial one's weights; the outputs do not change", () => {
    const out = run('multi-conv');
    const rows = [...out.matchAll(/^(Parallel|Serial|Serial, dithered)\s+([\d.]+)\s+([\d.]+) bytes\s+(-?[\d.]+)$/gm)].map((m) => ({
      label: m[1]!,
      us: Number(m[2]),
      perTile: Number(m[3]),
      checksum: m[4],
    }));
    expect(rows.map((r) => r.label)).toEqual(['Parallel', 'Serial', 'Serial, dithered']);
    const [parallel, serial, dithered] = rows;
    expect(parallel!.us).toBeLessThan(serial!.us);
    expect(dithered!.us).toBe(serial!.us);
    expect(dithered!.perTile).toBeLessThan(serial!.perTile);
    expect(new Set(rows.map((r) => r.checksum)).size).toBe(1);
  });

  it('fault-recovery.ts: an IPU_RESET mid-run is recovered and the final weights equal the undisturbed run', () => {
    const out = run('fault-recovery');
    expect(out).toContain('step 6: simulated IPU_RESET at B0 on IPU 0, tile 0: recover with IPU_RESET');
    expect(out).toContain('recovered with IPU_RESET; resuming from the checkpoint of step 4');
    expect(out).toContain("largest difference between the undisturbed and the recovered run's weights: 0");
  });
});
