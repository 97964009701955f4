import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

describe('examples/inference-half.ts', () => {
  it('runs Linear(1, 10) in float16 on a float16 input and gets a float16 output', () => {
    const { status, stdout, stderr } = runProgram('examples/inference-half.ts');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout).toMatch(/^output: \[(-?\d+\.\d{4}, ){9}-?\d+\.\d{4}\]$/m);
    expect(stdout).toContain('output dtype: float16 (executor.outputDtypes(): float16)');
    expect(stdout).toContain('every output value is a float16 value: true');
  });
});
