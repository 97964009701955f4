import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { popart } from 'poptfjs';
import { classifierGradients, expectAllClose, linearClassifier, linearModel, ramp } from './session_models.js';

const { AnchorReturnType, DataFlow, DeviceManager, InferenceSession, StepIO, TrainingSession } = popart;

describe('anchors and return types', () => {
  it('returns All, Final, Sum and EveryN of outputs and intermediate values as the hand computation does, in PopART shapes', async () => {
    const m = linearModel();
    const anchors = {
      [m.out]: AnchorReturnType('All'),
      [m.h]: AnchorReturnType('EVERYN', 2),
      outFinal: AnchorReturnType('final'),
      hSum: AnchorReturnType('Sum'),
    };
    // The same tensors under the return types the test needs twice: identities of out and h.
    m.builder.aiOnnx.identity([m.out], {}, 'outFinal');
    m.builder.aiOnnx.identity([m.h], {}, 'hSum');
    const renamed = { [m.out]: anchors[m.out]!, [m.h]: anchors[m.h]!, 'outFinal:0': anchors.outFinal!, 'hSum:0': anchors.hSum! };
    const options = new popart.SessionOptions();
    options.enableReplicatedGraphs = true;
    options.replicatedGraphCount = 2;
    const session = await InferenceSession.create({
      model: m.builder.getModelProto(),
      dataFlow: new DataFlow(4, renamed),
      deviceInfo: new DeviceManager().createIpuModelDevice({ numIpus: 2 }),
      userOptions: options,
    });
    await session.prepareDevice();
    const arrays = session.initAnchorArrays();
    expect(session.anchorArrayShape(m.out)).toEqual([4, 2, 2, 2]);
    expect(session.anchorArrayShape(m.h)).toEqual([2, 2, 2, 2]);
    expect(session.anchorArrayShape('outFinal:0')).toEqual([2, 2, 2]);
    expect(session.anchorArrayShape('hSum:0')).toEqual([2, 2, 2]);
    const x = ramp(4 * 2 * 2 * 3);
    session.run(new StepIO({ [m.x]: x }, arrays));

    const h = tf.reshape(tf.matMul(tf.tensor(x, [16, 3]), tf.tensor(m.W, [3, 2])), [4, 2, 2, 2]);
    const out = tf.add(h, tf.tensor(m.B));
    expectAllClose(arrays[m.out]!, out.dataSync());
    expectAllClose(arrays[m.h]!, tf.gather(h, [1, 3]).dataSync());
    expectAllClose(arrays['outFinal:0']!, tf.gather(out, 3).dataSync());
    expectAllClose(arrays['hSum:0']!, tf.sum(h, 0).dataSync());
    session.dispose();
  });

  it('returns the loss of every accumulation step in training, and its Final and Sum over the step', async () => {
    const m = linearClassifier();
    const options = new popart.SessionOptions();
    options.enableGradientAccumulation = true;
    options.accumulationFactor = 2;
    m.builder.aiOnnx.identity([m.loss], {}, 'lossFinal');
    m.builder.aiOnnx.identity([m.loss], {}, 'lossSum');
    const lr = 0.5;
    const session = await TrainingSession.create({
      model: m.builder.getModelProto(),
      dataFlow: new DataFlow(3, { [m.loss]: AnchorReturnType('All'), 'lossFinal:0': AnchorReturnType('Final'), 'lossSum:0': AnchorReturnType('Sum') }),
      loss: m.loss,
      optimizer: new popart.ConstSGD(lr),
      deviceInfo: new DeviceManager().createCpuDevice(),
      userOptions: options,
    });
    await session.prepareDevice();
    const arrays = session.initAnchorArrays();
    expect(session.anchorArrayShape(m.loss)).toEqual([3, 2]);
    expect(session.anchorArrayShape('lossFinal:0')).toEqual([]);
    const x = ramp(3 * 2 * 2 * 3, 0.07);
    const labels = Int32Array.from([0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1]);
    session.run(new StepIO({ [m.x]: x, [m.labels]: labels }, arrays));

    // PopART sums the gradients of the accumulated micro-batches (accumulationAndReplicationReductionType Sum).
    let w = tf.tensor(m.W, [3, 2]);
    let b = tf.tensor(m.B);
    const losses: number[] = [];
    for (let d = 0; d < 3; d++) {
      let gw = tf.zerosLike(w);
      let gb = tf.zerosLike(b);
      for (let g = 0; g < 2; g++) {
        const k = d * 2 + g;
        const xs = tf.tensor(x.subarray(k * 6, k * 6 + 6), [2, 3]);
        const ls = tf.tensor(labels.subarray(k * 2, k * 2 + 2), [2], 'int32');
        const step = classifierGradients(w, b, xs, ls);
        losses.push(step.loss);
        gw = tf.add(gw, step.gw);
        gb = tf.add(gb, step.gb);
      }
      w = tf.sub(w, tf.mul(gw, lr));
      b = tf.sub(b, tf.mul(gb, lr));
    }
    expectAllClose(arrays[m.loss]!, losses);
    expectAllClose(arrays['lossFinal:0']!, [losses[5]!]);
    expectAllClose(arrays['lossSum:0']!, [losses.reduce((a, c) => a + c, 0)]);
    session.dispose();
  });

  it('checks buffer sizes and types with runtime asserts, stating expected and actual', async () => {
    const m = linearModel();
    const session = await InferenceSession.create({
      model: m.builder.getModelProto(),
      dataFlow: new DataFlow(2, { [m.out]: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    await session.prepareDevice();
    const arrays = session.initAnchorArrays();
    expect(() => session.run(new StepIO({ [m.x]: new Float32Array(10) }, arrays))).toThrow(/StepIO input 'x' has 10 elements, expected 12 \(shape \[2, 2, 3\]\)/);
    expect(() => session.run(new StepIO({ [m.x]: new Int32Array(12) }, arrays))).toThrow(/is a Int32Array, but the tensor is float32: give a Float32Array/);
    expect(() => session.run(new StepIO({}, arrays))).toThrow(/no buffer for input\(s\) 'x'/);
    expect(() => session.run(new StepIO({ [m.x]: new Float32Array(12), y: new Float32Array(1) }, arrays))).toThrow(/'y' that the model does not take/);
    expect(() => session.run(new StepIO({ [m.x]: new Float32Array(12) }, { [m.out]: new Float32Array(7) }))).toThrow(
      /buffer of anchor 'out:0' has 7 elements, expected 8 \(shape \[2, 2, 2\]\)/,
    );
    expect(() => session.run(new StepIO({ [m.x]: new Float32Array(12) }, {}))).toThrow(/no buffer for anchor 'out:0'/);

    const relaxed = new StepIO({ [m.x]: ramp(20) }, { [m.out]: new Float32Array(9).fill(7) });
    relaxed.enableRuntimeAsserts(false);
    session.run(relaxed);
    const reference = tf.add(tf.matMul(tf.tensor(ramp(12), [4, 3]), tf.tensor(m.W, [3, 2])), tf.tensor(m.B)).dataSync();
    expectAllClose(relaxed.outputs.get(m.out)!.subarray(0, 8), reference);
    const small = new StepIO({ [m.x]: new Float32Array(11) }, arrays);
    small.enableRuntimeAsserts(false);
    expect(() => session.run(small)).toThrow(/has 11 elements, expected at least 12/);
    session.dispose();
  });

  it('runs many steps without leaking tensors', async () => {
    const m = linearClassifier();
    const session = await TrainingSession.create({
      model: m.builder.getModelProto(),
      dataFlow: new DataFlow(2, { [m.loss]: AnchorReturnType('All'), [m.probs]: AnchorReturnType('Sum') }),
      loss: m.loss,
      optimizer: new popart.SGD({ defaultLearningRate: [0.1, false], defaultMomentum: [0.9, true] }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    await session.prepareDevice();
    const stepio = new StepIO({ [m.x]: ramp(12), [m.labels]: Int32Array.from([0, 1, 1, 0]) }, session.initAnchorArrays());
    session.run(stepio);
    const before = tf.memory().numTensors;
    for (let i = 0; i < 10; i++) session.run(stepio);
    expect(tf.memory().numTensors).toBe(before);
    session.dispose();
  });
});
