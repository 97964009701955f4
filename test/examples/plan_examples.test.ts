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
});
