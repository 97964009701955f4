/**
 * `opts.Jit`: PopTorch's `_JitOptions` (python/options.py). PopTorch 3.x
 * records the ops reaching its dispatcher (`traceModel(false)`, the default)
 * and refuses `traceModel(true)`; poptfjs records the kernels reaching tfjs's
 * engine the same way.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Options, PoptfjsError } from 'poptfjs';

afterEach(() => vi.restoreAllMocks());

function collectLog(): string[] {
  const lines: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  return lines;
}

describe('Options.Jit', () => {
  it("accepts traceModel(false), the only way poptfjs makes its graph, with PopTorch's deprecation warning", () => {
    const lines = collectLog();
    const opts = new Options();
    expect(opts.Jit.traceModel(false)).toBe(opts.Jit);
    expect(lines.filter((l) => l.includes(' W: '))).toEqual([expect.stringContaining('[Deprecated] Do not call options.Jit.traceModel()')]);
  });

  it('refuses traceModel(true), saying why, and anything but a boolean', () => {
    collectLog();
    const opts = new Options();
    expect(() => opts.Jit.traceModel(true)).toThrow(PoptfjsError);
    expect(() => opts.Jit.traceModel(true)).toThrow(
      "Options.Jit.traceModel: options.Jit.traceModel(true) is no longer supported: poptfjs records the kernels the model runs as they reach tfjs's engine, as PopTorch's dispatcher does (traceModel(false), the default); there is no torch.jit.trace to use",
    );
    expect(() => opts.Jit.traceModel('yes' as never)).toThrow('Options.Jit.traceModel: expected a boolean');
  });

  it('is refused on frozen options, as every setter is', () => {
    const opts = new Options();
    opts.freeze();
    expect(() => opts.Jit.traceModel(false)).toThrow(/^Options\.Jit\.traceModel: these options are frozen/);
  });
});
