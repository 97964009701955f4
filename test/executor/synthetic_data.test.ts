import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, inferenceModel, optim, trainingModel } from 'poptfjs';

function dense(seed: number): tf.Sequential {
  return tf.sequential({ layers: [tf.layers.dense({ units: 3, inputShape: [4], kernelInitializer: tf.initializers.glorotUniform({ seed }) })] });
}

const hostSegments = (executor: { executable: { hardware: { timeline: { segments: readonly { kind: string }[] } } } }) =>
  executor.executable.hardware.timeline.segments.filter((s) => s.kind === 'host').length;

describe('Options.enableSyntheticData', () => {
  it("returns zeros in the outputs' shapes and has no host transfer on the timeline", async () => {
    const model = dense(1);
    const x = tf.randomNormal([8, 4]);
    const real = inferenceModel(model, { options: new Options().deviceIterations(2) });
    const synthetic = inferenceModel(model, { options: new Options().deviceIterations(2).enableSyntheticData(true) });
    const expected = (await real(x)) as tf.Tensor;
    const output = (await synthetic(x)) as tf.Tensor;
    expect(output.shape).toEqual(expected.shape);
    expect(Array.from(await output.data())).toEqual(new Array(8 * 3).fill(0));
    expect(Array.from(await expected.data()).some((v) => v !== 0)).toBe(true);

    expect(hostSegments(real)).toBeGreaterThan(0);
    expect(real.executable.hardware.timeline.ipus[0]!.host).toBeGreaterThan(0);
    expect(hostSegments(synthetic)).toBe(0);
    expect(synthetic.executable.hardware.timeline.ipus[0]!.host).toBe(0);
    // Everything else on the timeline is the same: the call is shorter by the host transfer.
    const { timeline } = real.executable.hardware;
    expect(synthetic.executable.hardware.timeline.duration).toBeCloseTo(timeline.duration - timeline.ipus[0]!.host, 12);
  });

  it('trains on inputs made on the device: the host inputs are not read and the loss comes back as zero', async () => {
    const train = async (x: tf.Tensor, y: tf.Tensor) => {
      const model = dense(2);
      const before = model.getWeights()[0]!.dataSync().slice();
      const options = new Options().enableSyntheticData(true).randomSeed(7);
      const executor = trainingModel(model, { options, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
      const [output, loss] = (await executor(x, y)) as [tf.Tensor, tf.Tensor];
      executor.copyWeightsToHost();
      const after = model.getWeights()[0]!.dataSync().slice();
      executor.destroy();
      return { before, after, output: Array.from(await output.data()), loss: Array.from(await loss.data()) };
    };
    const a = await train(tf.ones([2, 4]), tf.ones([2, 3]));
    const b = await train(tf.fill([2, 4], 5), tf.zeros([2, 3]));
    expect(a.loss).toEqual([0]);
    expect(a.output).toEqual(new Array(6).fill(0));
    expect(Array.from(a.after)).not.toEqual(Array.from(a.before));
    // Different host data, the same seed: the same synthetic inputs, so the same update.
    expect(Array.from(b.after)).toEqual(Array.from(a.after));
  });
});
