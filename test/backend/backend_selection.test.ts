import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

const PROBE = 'test/fixtures/backend/print_backend.ts';

describe('backend selection', () => {
  it('falls back to wasm when @tensorflow/tfjs-node is not installed, and says so at INFO level', () => {
    const { status, stdout, stderr } = runProgram(PROBE, [], { POPTFJS_LOG_LEVEL: 'INFO', POPTFJS_BACKEND: '' });
    expect(status).toBe(0);
    expect(stdout.trim()).toBe('wasm');
    expect(stderr).toMatch(/poptfjs:poptfjs \d+\.\d+ I: using the tfjs 'wasm' backend \(tensorflow: /);
  });

  it('is forced by POPTFJS_BACKEND', () => {
    const { status, stdout } = runProgram(PROBE, [], { POPTFJS_BACKEND: 'cpu' });
    expect(status).toBe(0);
    expect(stdout.trim()).toBe('cpu');
  });

  it('rejects an unknown POPTFJS_BACKEND', () => {
    const { status, stderr } = runProgram(PROBE, [], { POPTFJS_BACKEND: 'gpu' });
    expect(status).not.toBe(0);
    expect(stderr).toContain("POPTFJS_BACKEND: unknown backend 'gpu'; expected one of tensorflow, wasm, cpu");
  });

  it('is forced by Options.backend when a model is compiled', () => {
    const { status, stdout } = runProgram(PROBE, ['--option', 'cpu']);
    expect(status).toBe(0);
    expect(stdout.trim()).toBe('cpu');
  });
});
