import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { popart } from 'poptfjs';
import { expectAllClose, ramp } from '../session/session_models.js';

const { AnchorReturnType, Builder, DataFlow, DeviceManager, InferenceSession, StepIO, TrainingSession } = popart;

const [C, M, H] = [2, 3, 4];
const W0 = ramp(M * C * 9, 0.013, -0.17);
const B0 = Float32Array.from([0.1, -0.2, 0.3]);
const X = ramp(C * H * H, 0.05);

/** A 3×3 convolution with padding 1 of x [1, C, H, H] by w [M, C, 3, 3] plus b, computed element by element. */
function convolved(x: Float32Array, w: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(M * H * H);
  for (let o = 0; o < M; o++)
    for (let i = 0; i < H; i++)
      for (let j = 0; j < H; j++) {
        let sum = b[o]!;
        for (let c = 0; c < C; c++)
          for (let p = 0; p < 3; p++)
            for (let q = 0; q < 3; q++) {
              const [r, s] = [i + p - 1, j + q - 1];
              if (r >= 0 && r < H && s >= 0 && s < H) sum += x[(c * H + r) * H + s]! * w[((o * C + c) * 3 + p) * 3 + q]!;
            }
        out[(o * H + i) * H + j] = sum;
      }
  return out;
}

function convModel() {
  const builder = new Builder();
  const x = builder.addInputTensor('FLOAT', [1, C, H, H], 'x');
  const w = builder.addInitializedInputTensor({ data: W0, shape: [M, C, 3, 3] }, 'w');
  const b = builder.addInitializedInputTensor({ data: B0, shape: [M] }, 'b');
  const y = builder.aiOnnx.conv([x, w, b], { pads: [1, 1, 1, 1] }, 'y');
  builder.addOutputTensor(y);
  return { builder, x, y };
}

/** Counts the calls of a registered kernel that `matches` (the interpreter calls the kernel functions themselves). */
function countCalls(kernelName: string, matches: (attrs: Record<string, unknown>) => boolean = () => true): () => number {
  const config = tf.getKernel(kernelName, tf.getBackend())!;
  const spy = vi.spyOn(config, 'kernelFunc');
  return () => spy.mock.calls.filter(([call]) => matches((call.attrs ?? {}) as Record<string, unknown>)).length;
}

/** Calls of the convolution weight's layout transpose, [M, C, kh, kw] to [kh, kw, C, M]. */
const weightTransposes = () => countCalls('Transpose', (attrs) => JSON.stringify(attrs.perm) === '[2,3,1,0]');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('weight-derived values', () => {
  it('lays out a convolution weight once, not on every run, and after writeWeights and weightsFromHost uses the new weight', async () => {
    const m = convModel();
    const session = await InferenceSession.create({
      model: m.builder.getModelProto(),
      dataFlow: new DataFlow(1, { [m.y]: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    await session.prepareDevice();
    const transposes = weightTransposes();
    const anchors = session.initAnchorArrays();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) {
      session.run(new StepIO({ [m.x]: X }, anchors));
      expectAllClose(anchors[m.y]!, convolved(X, W0, B0), 1e-5);
    }
    expect(transposes()).toBe(1);
    const held = tf.memory().numTensors;
    session.run(new StepIO({ [m.x]: X }, anchors));
    expect(tf.memory().numTensors).toBe(held);
    expect(held).toBeGreaterThan(before);

    const w1 = W0.map((v, i) => v * (i % 3) - 0.01);
    session.writeWeights({ w: w1 });
    session.weightsFromHost();
    session.run(new StepIO({ [m.x]: X }, anchors));
    session.run(new StepIO({ [m.x]: X }, anchors));
    expectAllClose(anchors[m.y]!, convolved(X, w1, B0), 1e-5);
    expect(transposes()).toBe(2);
    session.dispose();
    expect(tf.memory().numTensors).toBeLessThan(before);
  });

  it('skips on every run the nodes whose outputs only other weight-derived nodes read (a negated weight before its layout transpose)', async () => {
    const builder = new Builder();
    const x = builder.addInputTensor('FLOAT', [1, C, H, H], 'x');
    const w = builder.addInitializedInputTensor({ data: W0, shape: [M, C, 3, 3] }, 'w');
    const b = builder.addInitializedInputTensor({ data: B0, shape: [M] }, 'b');
    const y = builder.aiOnnx.conv([x, builder.aiOnnx.neg([w]), b], { pads: [1, 1, 1, 1] }, 'y');
    builder.addOutputTensor(y);
    const session = await InferenceSession.create({
      model: builder.getModelProto(),
      dataFlow: new DataFlow(1, { [y]: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    await session.prepareDevice();
    const negations = countCalls('Neg');
    const transposes = weightTransposes();
    const anchors = session.initAnchorArrays();
    for (let i = 0; i < 3; i++) {
      session.run(new StepIO({ [x]: X }, anchors));
      expectAllClose(
        anchors[y]!,
        convolved(
          X,
          W0.map((v) => -v),
          B0,
        ),
        1e-5,
      );
    }
    expect(negations()).toBe(1);
    expect(transposes()).toBe(1);
    session.dispose();
  });

  it('makes them again after each training step, so a run computes with the weights the last step left', async () => {
    const m = convModel();
    const loss = m.builder.aiGraphcore.l1loss([m.y], 0.5);
    const session = await TrainingSession.create({
      model: m.builder.getModelProto(),
      dataFlow: new DataFlow(1, { [m.y]: AnchorReturnType('All') }),
      loss,
      optimizer: new popart.ConstSGD(0.05),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    await session.prepareDevice();
    const transposes = weightTransposes();
    const anchors = session.initAnchorArrays();
    let w = W0;
    let b = B0;
    for (let step = 0; step < 3; step++) {
      session.run(new StepIO({ [m.x]: X }, anchors));
      expectAllClose(anchors[m.y]!, convolved(X, w, b), 1e-5);
      const weights = { w: new Float32Array(W0.length), b: new Float32Array(B0.length) };
      session.weightsToHost();
      session.readWeights(weights);
      expect(Array.from(weights.w)).not.toEqual(Array.from(w));
      ({ w, b } = weights);
    }
    expect(transposes()).toBe(3);
    session.dispose();
  });
});
