import { describe, expect, it } from 'vitest';
import { popart } from 'poptfjs';
import { expectAllClose } from './session_models.js';

const { Builder, DataFlow, DeviceManager, StepIO, TrainingSession } = popart;

const W0 = [0.5, -1, 2];
const X = [1, -2, 0.5];

/**
 * Trains `loss = sum(W · x)` (so the gradient of W is x) for `steps` weight
 * updates and returns W.
 */
async function trainedWeights(optimizer: popart.PopartOptimizer, steps: number): Promise<number[]> {
  const builder = new Builder();
  const x = builder.addInputTensor('FLOAT', [3], 'x');
  const w = builder.addInitializedInputTensor({ data: Float32Array.from(W0), shape: [3] }, 'W');
  const loss = builder.aiGraphcore.identityloss([builder.aiOnnx.mul([x, w])], { reduction: popart.ReductionType.Sum });
  const session = await TrainingSession.create({
    model: builder.getModelProto(),
    dataFlow: new DataFlow(steps, {}),
    loss,
    optimizer,
    deviceInfo: new DeviceManager().createCpuDevice(),
  });
  await session.prepareDevice();
  session.run(new StepIO({ [x]: Float32Array.from({ length: 3 * steps }, (_, i) => X[i % 3]!) }, {}));
  session.weightsToHost();
  const weights = { W: new Float32Array(3) };
  session.readWeights(weights);
  session.dispose();
  return Array.from(weights.W);
}

/** Applies `update(w, g, t)` to each element for `steps` steps (t from 1) with the constant gradient x. */
function reference(steps: number, update: (w: number, g: number, t: number, state: Record<string, number>) => number): number[] {
  return W0.map((w0, i) => {
    let w = w0;
    const state: Record<string, number> = {};
    for (let t = 1; t <= steps; t++) w = update(w, X[i]!, t, state);
    return w;
  });
}

describe('PopART optimizers in dictionary form', () => {
  it('SGD: momentum, weight decay and velocity scaling as PopART defines them', async () => {
    const [lr, mm, wd] = [0.1, 0.9, 0.05];
    const values = { defaultLearningRate: [lr, false], defaultMomentum: [mm, true], defaultWeightDecay: [wd, true] } as const;
    const expected = reference(3, (w, g, _t, s) => {
      s.v = (s.v ?? 0) * mm + (g + wd * w);
      return w - lr * s.v;
    });
    expectAllClose(await trainedWeights(new popart.SGD(values, { accumulatorAndMomentum: 'Separate' }), 3), expected);
    expectAllClose(await trainedWeights(new popart.SGD({ ...values, defaultVelocityScaling: [4, true] }), 3), expected);
  });

  it('SGD without momentum still scales the step by 1 - dampening, and ConstSGD is plain SGD', async () => {
    const expected = reference(2, (w, g) => w - 0.1 * (1 - 0.5) * g);
    expectAllClose(await trainedWeights(new popart.SGD({ defaultLearningRate: 0.1, defaultDampening: 0.5 }), 2), expected);
    expectAllClose(
      await trainedWeights(new popart.ConstSGD(0.1, 0.01), 2),
      reference(2, (w, g) => w - 0.1 * (g + 0.01 * w)),
    );
  });

  it('Adam: decoupled weight decay by default, an L2 term with L2Regularization, LAMB with its trust ratio', async () => {
    const [lr, b1, b2, eps, wd] = [0.01, 0.8, 0.95, 1e-6, 0.1];
    const values = { defaultLearningRate: lr, defaultBeta1: b1, defaultBeta2: b2, defaultEps: eps, defaultWeightDecay: wd };
    const adam = (decoupled: boolean, bias: boolean) => (w: number, g0: number, t: number, s: Record<string, number>) => {
      const g = decoupled ? g0 : g0 + wd * w;
      s.m = b1 * (s.m ?? 0) + (1 - b1) * g;
      s.v = b2 * (s.v ?? 0) + (1 - b2) * g * g;
      const mc = bias ? s.m / (1 - b1 ** t) : s.m;
      const vc = bias ? s.v / (1 - b2 ** t) : s.v;
      return w - lr * (mc / (Math.sqrt(vc) + eps) + (decoupled ? wd * w : 0));
    };
    expectAllClose(await trainedWeights(new popart.Adam(values), 3), reference(3, adam(true, true)), 1e-4);
    expectAllClose(await trainedWeights(new popart.Adam(values, { mode: 'AdamNoBias' }), 3), reference(3, adam(true, false)), 1e-4);
    expectAllClose(await trainedWeights(new popart.Adam(values, { weightDecayMode: 'L2Regularization' }), 3), reference(3, adam(false, true)), 1e-4);

    // LAMB: one step of the update x, scaled by min(||w||, maxWeightNorm) / ||x|| over the whole weight.
    const x = W0.map((w, i) => (1 / (1 + eps)) * Math.sign(X[i]!) + wd * w);
    const norm = (v: number[]) => Math.sqrt(v.reduce((a, c) => a + c * c, 0));
    const ratio = Math.min(norm(W0), 10) / norm(x);
    expectAllClose(
      await trainedWeights(new popart.Adam(values, { mode: 'Lamb' }), 1),
      W0.map((w, i) => w - lr * ratio * x[i]!),
      1e-4,
    );
  });

  it('Adaptive: RMSProp and centered RMSProp with momentum', async () => {
    const [lr, alpha, mm, eps] = [0.01, 0.9, 0.5, 1e-6];
    const values = { defaultLearningRate: lr, defaultAlpha: alpha, defaultMomentum: mm, defaultEps: eps };
    const rmsprop = (centered: boolean) => (w: number, g: number, _t: number, s: Record<string, number>) => {
      s.v1 = alpha * (s.v1 ?? 0) + (1 - alpha) * g * g;
      s.v2 = alpha * (s.v2 ?? 0) + (1 - alpha) * g;
      const x = g / (Math.sqrt(centered ? s.v1 - s.v2 * s.v2 : s.v1) + eps);
      s.v3 = mm * (s.v3 ?? 0) + x;
      return w - lr * s.v3;
    };
    expectAllClose(await trainedWeights(new popart.Adaptive(values), 3), reference(3, rmsprop(false)), 1e-4);
    expectAllClose(await trainedWeights(new popart.Adaptive(values, { mode: 'CenteredRMSProp' }), 3), reference(3, rmsprop(true)), 1e-4);
  });

  it('has PopART defaults and refuses what poptfjs cannot train with, saying why', () => {
    expect(new popart.SGD().value('defaultLearningRate')).toEqual({ value: 0.1, isConst: true });
    expect(new popart.SGD(0.3).value('defaultLearningRate')).toEqual({ value: 0.3, isConst: false });
    expect(new popart.Adam().value('defaultEps')).toEqual({ value: 1e-6, isConst: true });
    expect(new popart.Adaptive().value('defaultLearningRate')).toEqual({ value: 0.01, isConst: true });
    expect(() => new popart.SGD({ defaultLearningRat: 0.1 })).toThrow(/SGD: unknown field\(s\) 'defaultLearningRat'; the fields are defaultLearningRate/);
    expect(() => new popart.SGD({ defaultLearningRate: [-1, false] })).toThrow(/SGD: defaultLearningRate\[0\] = -1 is invalid: Too small/);
    expect(() => new popart.Adam({}, { mode: 'AdaMax' })).toThrow(/AdaMax is not available/);
    expect(() => new popart.Adaptive({}, { mode: 'AdaGrad' })).toThrow(/AdaGrad is not available/);
    expect(() => new popart.SGD().insertSpecific('W', { learningrate: 1 })).toThrow(/insertSpecific\('W'\): unknown field\(s\) 'learningrate'/);
  });
});
