import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

describe('examples/train-basic.ts', () => {
  it('trains the seed example for 800 steps and the host output matches the device output within 1e-4', () => {
    const { status, stdout, stderr } = runProgram('examples/train-basic.ts');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const losses = [...stdout.matchAll(/^(\d+): loss ([\d.]+)$/gm)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(losses.map(([step]) => step)).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 799]);
    expect(losses.at(-1)![1]).toBeLessThan(losses[0]![1]! / 10);
    expect(stdout).toMatch(/trained on a simulated IPU \(tfjs '(wasm|cpu|tensorflow)' backend\); host and device outputs differ by at most/);
  });
});
