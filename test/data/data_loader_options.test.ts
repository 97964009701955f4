import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DataLoader, Options, PoptfjsError, inferenceModel } from 'poptfjs';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** 12 samples y = 0..11, as one tensor of shape [12, 1]. */
function dataset(): tf.Tensor[] {
  return [tf.range(0, 12, 1, 'float32').reshape([12, 1])];
}

// PopTorch's DataLoader freezes the options it is given (options._freeze()); a deep copy is unfrozen.
describe('a DataLoader and its options', () => {
  it('freezes them: later changes are refused and the loader keeps its combined batch', () => {
    const opts = new Options({ fromEnvironment: false }).deviceIterations(2);
    const loader = new DataLoader(opts, dataset(), { batchSize: 3 });
    expect(opts.isFrozen()).toBe(true);
    expect(loader.options).toBe(opts);
    expect(() => opts.deviceIterations(4)).toThrow(PoptfjsError);
    expect(() => opts.deviceIterations(4)).toThrow(
      'Options.deviceIterations: these options are frozen (a wrapped model or a DataLoader uses them) and can no longer change; ' +
        'call clone() on the options and change the copy instead',
    );
    expect(() => opts.Training.gradientAccumulation(2)).toThrow(/^Options\.Training\.gradientAccumulation: these options are frozen/);
    expect(opts.settings.deviceIterations).toBe(2);
    expect([loader.combinedBatchSize, loader.length]).toEqual([6, 2]);
  });

  it('leaves clones free to change', () => {
    const opts = new Options({ fromEnvironment: false });
    new DataLoader(opts, dataset());
    const copy = opts.clone().deviceIterations(4);
    copy.Training.gradientAccumulation(3);
    expect(copy.isFrozen()).toBe(false);
    expect(new DataLoader(copy, dataset()).combinedBatchSize).toBe(12);
  });

  it('shares its frozen options with a model wrapped with them, whose calls take its batches', async () => {
    const opts = new Options({ fromEnvironment: false }).deviceIterations(4);
    const loader = new DataLoader(opts, dataset(), { batchSize: 3 });
    const executor = inferenceModel((x: tf.Tensor) => tf.mul(x, 2), { options: opts });
    const outputs: number[] = [];
    for await (const [x] of loader) {
      outputs.push(...((await executor(x!)) as tf.Tensor).dataSync());
      tf.dispose(x!);
    }
    expect(outputs).toEqual(Array.from({ length: 12 }, (_, i) => 2 * i));
  });
});
