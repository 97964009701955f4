/**
 * A float16 gradient accumulator (`accumType: 'float16'`) switches the mean
 * reduction strategy to Running, as PopTorch does (even over an explicit
 * Post): the accumulator holds the running mean of the micro-batches'
 * loss-scaled gradients, which fits float16 where their sum would overflow.
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MeanReductionStrategy, Options, ReductionType, optim, trainingModel } from 'poptfjs';

/** y = w·x with w = 0: for x = 1 and target 1 the squared error's gradient is 2(w - 1) = -2. */
function line(): tf.Sequential {
  return tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [1], useBias: false, kernelInitializer: 'zeros' })] });
}

const x = tf.ones([4, 1]);
const y = tf.ones([4, 1]);

/** Four micro-batches of one sample, gradients accumulated. */
function accumulating(strategy?: MeanReductionStrategy): Options {
  const options = new Options();
  options.Training.gradientAccumulation(4);
  if (strategy !== undefined) options.Training.setMeanAccumulationAndReplicationReductionStrategy(strategy);
  return options;
}

afterEach(() => vi.restoreAllMocks());

describe('float16 gradient accumulators', () => {
  it('use a Running mean, even over an explicit Post: four loss-scaled gradients of -40000 give -2 where their float16 sum overflows', async () => {
    const model = line();
    // Loss-scaled, each micro-batch's gradient is -2 · 20000 = -40000 (a float16 value); four of them sum to -160000 > 65504.
    const opt = new optim.SGD(model, { lr: 0.1, lossScaling: 20000, accumType: 'float16' });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt, options: accumulating(MeanReductionStrategy.Post) });
    tf.dispose(await executor.run(x, y));
    executor.copyWeightsToHost();
    // w = 0 - 0.1 · mean(-2) = 0.2, by hand.
    expect(model.getWeights()[0]!.dataSync()[0]).toBeCloseTo(0.2, 6);
    expect(executor.executable.reduction).toEqual({ type: 'Mean', strategy: 'Running' });
    executor.destroy();
  });

  it("keep the options' strategy with float32 accumulators, a Sum reduction, or SGD's combined variant (which ignores accumType)", async () => {
    const cases: Array<[optim.Optimizer | ((m: tf.LayersModel) => optim.Optimizer), Options, object]> = [
      [(m) => new optim.Adam(m, { accumType: 'float32' }), accumulating(), { type: 'Mean', strategy: 'Post' }],
      [(m) => new optim.Adam(m, { accumType: 'float16' }), accumulating(), { type: 'Mean', strategy: 'Running' }],
      [(m) => new optim.SGD(m, { momentum: 0.9, useCombinedAccum: true, accumType: 'float16' }), accumulating(), { type: 'Mean', strategy: 'Post' }],
      [
        (m) => new optim.SGD(m, { accumType: 'float16' }),
        (() => {
          const o = accumulating();
          o.Training.accumulationAndReplicationReductionType(ReductionType.Sum);
          return o;
        })(),
        { type: 'Sum', strategy: 'Post' },
      ],
    ];
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    for (const [make, options, reduction] of cases) {
      const model = line();
      const optimizer = typeof make === 'function' ? make(model) : make;
      const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer, options });
      await executor.compile(x, y);
      expect(executor.executable.reduction).toEqual(reduction);
      executor.destroy();
    }
  });

  it('with Post, as the options give it to a float32 accumulator, the same step is the same number', async () => {
    const model = line();
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1, lossScaling: 20000 }), options: accumulating() });
    tf.dispose(await executor.run(x, y));
    expect(executor.executable.reduction.strategy).toBe('Post');
    executor.copyWeightsToHost();
    expect(model.getWeights()[0]!.dataSync()[0]).toBeCloseTo(0.2, 6);
    executor.destroy();
  });
});
