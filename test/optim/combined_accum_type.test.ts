/**
 * SGD's combined variant ignores `accumType` and `firstOrderMomentumAccumType`
 * with a warning, as PopTorch does: its one tensor per parameter has the
 * parameter's precision, so the numbers are those without them.
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { optim, trainingModel } from 'poptfjs';

function regressor(): tf.Sequential {
  return tf.sequential({
    layers: [tf.layers.dense({ units: 2, inputShape: [3], kernelInitializer: tf.initializers.glorotUniform({ seed: 7 }) })],
  });
}

/** The warnings logged while `fn` runs. */
function warningsDuring(fn: () => void): string[] {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return lines.filter((l) => / W: /.test(l));
}

afterEach(() => vi.restoreAllMocks());

describe('accumType on the combined SGD variant', () => {
  it('is ignored with one warning per optimizer, naming the attribute', () => {
    const model = regressor();
    let opt: optim.SGD | undefined;
    const warnings = warningsDuring(() => {
      opt = new optim.SGD(model, { lr: 0.1, momentum: 0.9, useCombinedAccum: true, accumType: 'float16', firstOrderMomentumAccumType: 'float16' });
      opt.settings();
      opt.settings();
    });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(
      "optim.SGD: accumType 'float16' is ignored with useCombinedAccum: true; the combined variant accumulates gradients and velocity in one tensor of the parameter's precision",
    );
    expect(warnings[1]).toContain("optim.SGD: firstOrderMomentumAccumType 'float16' is ignored with useCombinedAccum: true");
    expect(opt!.stateSlots()).toEqual([{ name: 'scaledVelocity', precision: 'parameter' }]);
  });

  it('does not warn for the separate variant or for float32', () => {
    const model = regressor();
    expect(warningsDuring(() => new optim.SGD(model, { momentum: 0.9, accumType: 'float16' }).settings())).toEqual([]);
    expect(warningsDuring(() => new optim.SGD(model, { momentum: 0.9, useCombinedAccum: true, accumType: 'float32' }).settings())).toEqual([]);
  });

  it('trains exactly as the combined variant without it', async () => {
    const x = tf.randomNormal([4, 3], 0, 1, 'float32', 3);
    const y = tf.randomNormal([4, 2], 0, 1, 'float32', 4);
    const weights: Float32Array[][] = [];
    for (const accumType of ['float32', 'float16'] as const) {
      const model = regressor();
      const opt = new optim.SGD(model, { lr: 0.1, momentum: 0.9, useCombinedAccum: true, velocityScaling: 4, accumType });
      const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
      for (let i = 0; i < 3; i++) tf.dispose(await executor.run(x, y));
      executor.copyWeightsToHost();
      weights.push(model.getWeights().map((w) => w.dataSync() as Float32Array));
      executor.destroy();
    }
    expect(weights[1]).toEqual(weights[0]);
  });
});
