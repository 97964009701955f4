import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Options, OutputMode, getLogger, inferenceModel } from 'poptfjs';

/** Runs `fn` with the options logger at INFO and returns the lines it wrote to stderr. */
function infoLines(fn: () => void): string[] {
  const lines: string[] = [];
  const logger = getLogger('options');
  const level = logger.getLevel();
  logger.setLevel('INFO');
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  try {
    fn();
  } finally {
    spy.mockRestore();
    logger.setLevel(level);
  }
  return lines;
}

afterEach(() => vi.restoreAllMocks());

describe('a return period with an output mode other than EveryN', () => {
  it('is ignored, as PopTorch ignores it, with an info message', () => {
    const opts = new Options();
    const lines = infoLines(() => opts.outputMode(OutputMode.All, 2));
    expect(opts.settings.outputMode).toBe('All');
    expect(opts.settings.outputReturnPeriod).toBe(1);
    expect(lines.join('')).toContain('I: Options.outputMode: return period 2 ignored with OutputMode.All; it only applies to OutputMode.EveryN');
  });

  it('is ignored for Final and Sum, and in options data and anchors', () => {
    for (const mode of [OutputMode.Final, OutputMode.Sum]) expect(new Options().outputMode(mode, 5).settings.outputReturnPeriod).toBe(1);
    expect(Options.fromJSON({ outputMode: 'All', outputReturnPeriod: 3 }).settings.outputReturnPeriod).toBe(1);
    expect(new Options().anchorTensor('a', 'x', undefined, 2).settings.anchoredTensors.a).toEqual({ longName: 'x', outputReturnPeriod: 1 });
  });

  it('leaves OutputMode.All returning every micro-batch', async () => {
    // Four device iterations of one sample each: All returns the four results, whatever the period.
    const double = (x: tf.Tensor) => tf.mul(x, 2);
    const executor = inferenceModel(double, { options: new Options().deviceIterations(4).outputMode(OutputMode.All, 2) });
    const out = (await executor(tf.tensor1d([1, 2, 3, 4]))) as tf.Tensor;
    expect(Array.from(out.dataSync())).toEqual([2, 4, 6, 8]);
  });

  it('is still required, and checked, with EveryN', () => {
    expect(() => new Options().outputMode(OutputMode.EveryN)).toThrow('Options.outputMode: OutputMode.EveryN needs a return period (a positive integer), got none');
    expect(() => new Options().outputMode(OutputMode.EveryN, 0)).toThrow('Options.outputMode: outputReturnPeriod: expected a positive integer, got 0');
    expect(new Options().outputMode(OutputMode.EveryN, 2).settings.outputReturnPeriod).toBe(2);
  });
});

describe("anchorTensor's return period", () => {
  it("defaults to 1 with EveryN, as PopTorch's anchorTensor(..., output_return_period=1) does", () => {
    const anchors = new Options().anchorTensor('t1', 'tensor1', OutputMode.EveryN).anchorTensor('t2', 'tensor2', OutputMode.EveryN, 2).settings.anchoredTensors;
    expect(anchors.t1).toEqual({ longName: 'tensor1', outputMode: 'EveryN', outputReturnPeriod: 1 });
    expect(anchors.t2).toEqual({ longName: 'tensor2', outputMode: 'EveryN', outputReturnPeriod: 2 });
    expect(() => new Options().anchorTensor('t', 'x', OutputMode.EveryN, 0)).toThrow('Options.anchorTensor: outputReturnPeriod: expected a positive integer, got 0');
  });
});
