import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

/** The loss curves of a printed table: column name → MSE per printed step. */
function curves(stdout: string, title: string): Record<string, number[]> {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.startsWith(title));
  const names = lines[start + 1]!.trim()
    .split(/\s{2,}/)
    .slice(1);
  const rows: number[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!/^\s*\d+\s/.test(line)) break;
    rows.push(line.trim().split(/\s+/).slice(1).map(Number));
  }
  return Object.fromEntries(names.map((n, i) => [n, rows.map((r) => r[i]!)]));
}

describe('examples/loss-scaling.ts', () => {
  it('shows float16 gradients flushing to zero without loss scaling and training with it, and the same for velocity scaling', () => {
    const { status, stdout, stderr } = runProgram('examples/loss-scaling.ts');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const loss = curves(stdout, 'loss curves (MSE) of a float16 model');
    expect(Object.keys(loss)).toEqual(['float32 model', 'no scaling', 'lossScaling 1024', 'automatic scaling']);
    const first = loss['float32 model']![0]!;
    expect(new Set(loss['no scaling'])).toEqual(new Set([loss['no scaling']![0]]));
    expect(stdout).toContain('no scaling: weights moved by at most 0 (the float16 gradients flushed to zero)');
    for (const name of ['float32 model', 'lossScaling 1024', 'automatic scaling']) expect(loss[name]!.at(-1)!).toBeLessThan(first / 5);
    loss['lossScaling 1024']!.forEach((l, i) => expect(Math.abs(l - loss['float32 model']![i]!)).toBeLessThan(0.01 * first));

    const velocity = curves(stdout, 'loss curves (MSE), combined SGD');
    expect(new Set(velocity['velocity 1'])).toEqual(new Set([velocity['velocity 1']![0]]));
    expect(stdout).toContain('velocityScaling 1: weights moved by at most 0 (the float16 velocity flushed to zero)');
    expect(velocity['velocity 1024']!.at(-1)!).toBeLessThan(velocity['velocity 1024']![0]! / 100);
  });
});
