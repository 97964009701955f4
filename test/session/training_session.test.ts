import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { onnx, popart } from 'poptfjs';
import { checkWithOnnx, onnxCheckerAvailable } from './onnx_checker.js';
import { classifierGradients, expectAllClose, linearClassifier, ramp } from './session_models.js';

const { AnchorReturnType, DataFlow, DeviceManager, StepIO, TrainingSession, SessionOptions } = popart;

const LABELS = Int32Array.from([0, 1, 1, 0, 1, 1, 0, 0]);

/** Trains the linear classifier with `optimizer` for `steps` runs of `batchesPerStep` batches; returns the session and its step's data. */
async function trainedClassifier(optimizer: popart.PopartOptimizer, userOptions: popart.SessionOptions = new SessionOptions(), batchesPerStep = 2) {
  const m = linearClassifier();
  const session = await TrainingSession.create({
    model: m.builder.getModelProto(),
    dataFlow: new DataFlow(batchesPerStep, { [m.loss]: AnchorReturnType('All') }),
    loss: m.loss,
    optimizer,
    deviceInfo: new DeviceManager().createIpuModelDevice({ numIpus: 2 }),
    userOptions,
  });
  await session.prepareDevice();
  return { m, session };
}

function hostWeights(session: popart.TrainingSession): { W: Float32Array; b: Float32Array } {
  const weights = { W: new Float32Array(6), b: new Float32Array(2) };
  session.weightsToHost();
  session.readWeights(weights);
  return weights;
}

describe('TrainingSession', () => {
  it('trains like hand-written SGD with momentum, a weight update per batch, gradients summed over replicas', async () => {
    const options = new SessionOptions();
    options.enableReplicatedGraphs = true;
    options.replicatedGraphCount = 2;
    const [lr, momentum] = [0.2, 0.9];
    const { m, session } = await trainedClassifier(new popart.SGD({ defaultLearningRate: [lr, false], defaultMomentum: [momentum, true] }), options);
    expect(session.getTrainedWeightIds().sort()).toEqual(['W', 'b']);
    const x = ramp(2 * 2 * 2 * 3, 0.09);
    const anchors = session.initAnchorArrays();
    session.run(new StepIO({ [m.x]: x, [m.labels]: LABELS }, anchors));
    session.run(new StepIO({ [m.x]: x, [m.labels]: LABELS }, anchors));

    let w = tf.tensor(m.W, [3, 2]);
    let b = tf.tensor(m.B);
    let vw = tf.zerosLike(w);
    let vb = tf.zerosLike(b);
    let losses: number[] = [];
    for (let step = 0; step < 2; step++) {
      losses = [];
      for (let d = 0; d < 2; d++) {
        let gw = tf.zerosLike(w);
        let gb = tf.zerosLike(b);
        for (let r = 0; r < 2; r++) {
          const k = d * 2 + r;
          const g = classifierGradients(w, b, tf.tensor(x.subarray(k * 6, k * 6 + 6), [2, 3]), tf.tensor(LABELS.subarray(k * 2, k * 2 + 2), [2], 'int32'));
          losses.push(g.loss);
          gw = tf.add(gw, g.gw);
          gb = tf.add(gb, g.gb);
        }
        vw = tf.add(tf.mul(vw, momentum), gw);
        vb = tf.add(tf.mul(vb, momentum), gb);
        w = tf.sub(w, tf.mul(vw, lr));
        b = tf.sub(b, tf.mul(vb, lr));
      }
    }
    expectAllClose(anchors[m.loss]!, losses);
    const trained = hostWeights(session);
    expectAllClose(trained.W, w.dataSync());
    expectAllClose(trained.b, b.dataSync());
    session.dispose();
  });

  it('averages the accumulated gradients with accumulationAndReplicationReductionType Mean', async () => {
    const options = new SessionOptions();
    options.enableGradientAccumulation = true;
    options.accumulationFactor = 2;
    options.accumulationAndReplicationReductionType = popart.ReductionType.Mean;
    const { m, session } = await trainedClassifier(new popart.ConstSGD(0.3), options, 1);
    const x = ramp(12, 0.11);
    session.run(new StepIO({ [m.x]: x, [m.labels]: LABELS.subarray(0, 4) }, session.initAnchorArrays()));
    const w = tf.tensor(m.W, [3, 2]);
    const b = tf.tensor(m.B);
    const steps = [0, 1].map((k) => classifierGradients(w, b, tf.tensor(x.subarray(k * 6, k * 6 + 6), [2, 3]), tf.tensor(LABELS.subarray(k * 2, k * 2 + 2), [2], 'int32')));
    const trained = hostWeights(session);
    expectAllClose(trained.W, tf.sub(w, tf.mul(tf.div(tf.add(steps[0]!.gw, steps[1]!.gw), 2), 0.3)).dataSync());
    session.dispose();
  });

  it('updates non-constant optimizer values from the host and refuses to change constant ones or the optimizer kind', async () => {
    const { m, session } = await trainedClassifier(new popart.SGD({ defaultLearningRate: [0.1, false], defaultWeightDecay: [0, true] }), new SessionOptions(), 1);
    session.updateOptimizerFromHost(new popart.SGD({ defaultLearningRate: [0, false], defaultWeightDecay: [0, true] }));
    const stepio = new StepIO({ [m.x]: ramp(6), [m.labels]: LABELS.subarray(0, 2) }, session.initAnchorArrays());
    session.run(stepio);
    expectAllClose(hostWeights(session).W, m.W);
    expect(() => session.updateOptimizerFromHost(new popart.SGD({ defaultLearningRate: [0.1, false], defaultWeightDecay: [0.01, true] }))).toThrow(
      /defaultWeightDecay is 0 \(constant\) in the session's optimizer and 0.01 \(constant\) in the new one; only values that are not constant can change/,
    );
    expect(() => session.updateOptimizerFromHost(new popart.Adam())).toThrow(/trains with a SGD .*cannot change to a Adam/);
    session.dispose();
  });

  it('gives weights their own values with insertSpecific (a learning rate of 0 keeps W)', async () => {
    const sgd = new popart.SGD({ defaultLearningRate: [0.5, false] });
    sgd.insertSpecific('W', { learningRate: [0, false] });
    const { m, session } = await trainedClassifier(sgd, new SessionOptions(), 1);
    session.run(new StepIO({ [m.x]: ramp(6), [m.labels]: LABELS.subarray(0, 2) }, session.initAnchorArrays()));
    const trained = hostWeights(session);
    expectAllClose(trained.W, m.W);
    const g = classifierGradients(tf.tensor(m.W, [3, 2]), tf.tensor(m.B), tf.tensor(ramp(6), [2, 3]), tf.tensor(LABELS.subarray(0, 2), [2], 'int32'));
    expectAllClose(trained.b, tf.sub(tf.tensor(m.B), tf.mul(g.gb, 0.5)).dataSync());
    const unknown = new popart.SGD();
    unknown.insertSpecific('nope', { learningRate: 0.1 });
    expect(() => session.updateOptimizerFromHost(unknown)).toThrow(/specific values for \[W\], the new one for \[nope\]/);
    session.dispose();
  });

  it('moves weights between host and device, writes the trained model as valid ONNX and resets the host weights from a file', async () => {
    const { m, session } = await trainedClassifier(new popart.ConstSGD(0.5), new SessionOptions(), 1);
    const stepio = new StepIO({ [m.x]: ramp(6), [m.labels]: LABELS.subarray(0, 2) }, session.initAnchorArrays());
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-session-'));
    const original = join(dir, 'original.onnx');
    session.modelToHost(original);
    session.run(stepio);
    const trained = join(dir, 'trained.onnx');
    session.modelToHost(trained);
    const weights = hostWeights(session);
    expect(Array.from(weights.W)).not.toEqual(Array.from(m.W));
    const saved = onnx.readModel(trained).proto.graph!.initializer.find((t) => t.name === 'W')!;
    expectAllClose(onnx.tensorFromProto(saved).data as Float32Array, weights.W);
    if (onnxCheckerAvailable) expect(checkWithOnnx(trained).status).toBe(0);

    session.resetHostWeights(original);
    session.weightsFromHost();
    session.weightsToHost();
    const reset = { W: new Float32Array(6) };
    session.readWeights(reset);
    expectAllClose(reset.W, m.W);

    session.writeWeights({ b: Float32Array.from([1, 2]) });
    const read = { b: new Float32Array(2) };
    session.readWeights(read);
    expect(Array.from(read.b)).toEqual([1, 2]);
    expect(() => session.readWeights({ W: new Float32Array(5) })).toThrow(/buffer of weight 'W' has 5 elements, expected 6 \(shape \[3, 2\]\)/);
    expect(() => session.writeWeights({ V: new Float32Array(1) })).toThrow(/no weight 'V'; its weights are 'W', 'b'/);
    session.dispose();
  });

  it('names the problem when the loss, the optimizer or the options do not fit', async () => {
    const m = linearClassifier();
    const args = {
      model: m.builder.getModelProto(),
      dataFlow: new DataFlow(1, {}),
      optimizer: new popart.ConstSGD(0.1),
      deviceInfo: new DeviceManager().createCpuDevice(),
    };
    await expect(TrainingSession.create({ ...args, loss: 'nope' })).rejects.toThrow(/no tensor\(s\) named 'nope'/);
    await expect(TrainingSession.create({ ...args, loss: m.labels })).rejects.toThrow(/a loss must be floating-point|depends on no floating-point weight/);
    await expect(TrainingSession.create({ ...args, loss: m.loss, optimizer: {} as popart.SGD })).rejects.toThrow(/expected a PopART optimizer/);
    await expect(TrainingSession.create({ ...args, loss: m.loss, userOptions: { enablePipeline: true } as never })).rejects.toThrow(
      /SessionOptions: unknown field\(s\) 'enablePipeline'; the fields are virtualGraphMode, enablePipelining/,
    );
    // An inference session takes no optimizer (an unknown argument is refused by name).
    const { optimizer: _, ...inference } = args;
    await expect(popart.InferenceSession.create({ ...inference, userOptions: { enableGradientAccumulation: true, accumulationFactor: 4 } })).rejects.toThrow(
      /gradient accumulation \(accumulationFactor 4\) only applies to training/,
    );
  });
});
