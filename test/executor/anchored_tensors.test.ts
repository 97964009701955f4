import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Options, OutputMode, PoptfjsError, inferenceModel, optim, setLogLevel, trainingModel } from 'poptfjs';
import { configureLoggingFromEnv } from '../../lib/common/log.js';
import { expectClose } from '../helpers.js';

function mlp(seed: number): tf.Sequential {
  const init = (s: number) => tf.initializers.glorotUniform({ seed: seed + s });
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 3, inputShape: [4], activation: 'relu', kernelInitializer: init(0), biasInitializer: 'ones', name: `fc1_${seed}` }),
      tf.layers.dense({ units: 2, kernelInitializer: init(1), name: `fc2_${seed}` }),
    ],
  });
}

/** The id of the model's output in irText() (`return outputs=(%N)`). */
function outputValueName(irText: string): string {
  return /return outputs=\((%\d+)\)/.exec(irText)![1]!;
}

describe('Options.anchorTensor and getAnchoredTensor', () => {
  it('returns a value named as irText() shows it, for every micro-batch (All)', async () => {
    const model = mlp(1);
    const x = tf.randomNormal([8, 4], 0, 1, 'float32', 3);
    const plain = inferenceModel(model);
    await plain.compile(tf.zeros([2, 4]));
    const name = outputValueName(plain.irText());
    const executor = inferenceModel(model, { options: new Options().deviceIterations(4).anchorTensor('out', name) });
    const output = (await executor(x)) as tf.Tensor;
    expectClose(executor.getAnchoredTensor('out'), output);
    expectClose(output, model.predict(x) as tf.Tensor);
  });

  it("returns a layer's output by the layer name", async () => {
    const model = mlp(2);
    const x = tf.randomNormal([2, 4], 0, 1, 'float32', 4);
    const executor = inferenceModel(model, { options: new Options().anchorTensor('hidden', 'fc1_2') });
    await executor(x);
    const hidden = executor.getAnchoredTensor('hidden');
    expectClose(tf.reshape(hidden, [2, 3]), model.layers[0]!.apply(x) as tf.Tensor);
  });

  it('combines the micro-batches as its own output mode says', async () => {
    const model = mlp(3);
    const x = tf.randomNormal([8, 4], 0, 1, 'float32', 5);
    const options = new Options()
      .deviceIterations(4)
      .outputMode(OutputMode.Final)
      .anchorTensor('all', 'fc2_3', OutputMode.All)
      .anchorTensor('final', 'fc2_3')
      .anchorTensor('sum', 'fc2_3', OutputMode.Sum)
      .anchorTensor('every2', 'fc2_3', OutputMode.EveryN, 2);
    const executor = inferenceModel(model, { options });
    await executor(x);
    const y = tf.reshape(model.predict(x) as tf.Tensor, [4, 2, 2]); // [micro-batch, sample, unit]
    const all = tf.reshape(executor.getAnchoredTensor('all'), [4, 2, 2]);
    expectClose(all, y);
    expectClose(tf.reshape(executor.getAnchoredTensor('final'), [2, 2]), tf.gather(y, 3));
    expectClose(tf.reshape(executor.getAnchoredTensor('sum'), [2, 2]), tf.sum(y, 0), 1e-5, 1e-5);
    expectClose(tf.reshape(executor.getAnchoredTensor('every2'), [2, 2, 2]), tf.gather(y, [1, 3]));
  });

  it("returns a weight's gradient by PopART's name, new at each step", async () => {
    const model = mlp(4);
    const x = tf.randomNormal([2, 4], 0, 1, 'float32', 6);
    const y = tf.randomNormal([2, 2], 0, 1, 'float32', 7);
    const bias = model.layers[1]!.weights[1]!;
    const expected = tf.variableGrads(() => tf.losses.meanSquaredError(y, model.apply(x) as tf.Tensor) as tf.Scalar, [bias.read() as tf.Variable]).grads[bias.name]!;
    const options = new Options().anchorTensor('grad_bias', `Gradient___${bias.name}`);
    const executor = trainingModel(model, { options, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.5 }) });
    await executor(x, y);
    const first = executor.getAnchoredTensor('grad_bias');
    expectClose(first, expected);
    await executor(x, y);
    const second = executor.getAnchoredTensor('grad_bias');
    expect(second.shape).toEqual([2]);
    expect(Array.from(second.dataSync())).not.toEqual(Array.from(first.dataSync()));
  });

  it("sends the anchored values to the host: the timeline's host transfer grows by their bytes", async () => {
    const model = mlp(5);
    const x = tf.zeros([8, 4]);
    const plain = inferenceModel(model, { options: new Options().deviceIterations(4) });
    const anchored = inferenceModel(model, { options: new Options().deviceIterations(4).anchorTensor('out', 'fc2_5', OutputMode.All) });
    await plain.compile(x);
    await anchored.compile(x);
    const host = (e: typeof plain) => e.executable.hardware.timeline.ipus[0]!.host;
    const bytes = 8 * 2 * 4; // eight samples of two float32 values
    expect(host(anchored) - host(plain)).toBeCloseTo(bytes / plain.executable.hardware.spec.hostLinkBandwidth, 15);
  });

  it('refuses at compile a name the graph does not have, listing the names it has', async () => {
    const model = mlp(6);
    const executor = trainingModel(model, { options: new Options().anchorTensor('a', 'fc9'), loss: 'meanSquaredError' });
    const error = await executor.compile(tf.zeros([2, 4]), tf.zeros([2, 2])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PoptfjsError);
    expect((error as Error).message).toMatch(
      /^Options\.anchorTensor\('a', 'fc9'\): the compiled graph has no tensor 'fc9'; name a value of executor\.irText\(\) \(%0 to %\d+\), a layer's output by its name \('fc1_6', 'fc2_6'\), a gradient \('Gradient___fc1_6\/kernel', 'Gradient___fc1_6\/bias', 'Gradient___fc2_6\/kernel', 'Gradient___fc2_6\/bias'\), an updated weight \(UpdatedVar___<weight>\) or finalLossScale in a training graph$/,
    );
  });

  it('getAnchoredTensor names what is wrong', async () => {
    const model = mlp(7);
    const executor = inferenceModel(model, { options: new Options().anchorTensor('out', 'fc2_7') });
    await executor.compile(tf.zeros([2, 4]));
    expect(() => executor.getAnchoredTensor('out')).toThrow("getAnchoredTensor('out'): the model has not run yet");
    await executor(tf.zeros([2, 4]));
    expect(() => executor.getAnchoredTensor('other')).toThrow("getAnchoredTensor('other'): no tensor is anchored as 'other'; anchored: 'out'");
  });

  // PopTorch's tests/debug_tensors_test.py test_tensor_modes: at DEBUG the log names each anchor with its
  // mode and period ("Gradient___fc2.bias EVERYN/4"); the period of any mode but EveryN shows as 1.
  describe('logs each anchor with its output mode and period at DEBUG', () => {
    afterEach(() => configureLoggingFromEnv({}));
    it.each([
      [OutputMode.All, 3, 'ALL/1'],
      [OutputMode.EveryN, 4, 'EVERYN/4'],
      [OutputMode.Final, 1, 'FINAL/1'],
      [OutputMode.Sum, 1, 'Sum/1'],
    ])('%s', async (mode, period, expected) => {
      const model = mlp(8);
      const name = `Gradient___${model.layers[1]!.weights[1]!.name}`;
      const options = new Options().deviceIterations(4).anchorTensor('grad_bias', name, mode, period);
      const executor = trainingModel(model, { options, loss: 'meanSquaredError' });
      setLogLevel('DEBUG');
      const chunks: string[] = [];
      const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        chunks.push(String(chunk));
        return true;
      });
      try {
        await executor.compile(tf.zeros([8, 4]), tf.zeros([8, 2]));
      } finally {
        spy.mockRestore();
      }
      expect(chunks.join('')).toContain(`${name} ${expected}`);
    });
  });
});
