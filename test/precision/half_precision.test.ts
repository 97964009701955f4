/**
 * Float16 models on the simulated device: `half`, float16 results of ops
 * with float16 inputs, mixed float16/float32 ops, output dtypes, the bytes
 * float16 parameters take, and the `opts.Precision` options (stochastic
 * rounding, float16 partials, floating-point exceptions). References are
 * float32 tfjs computations rounded with the float16 rounding tested in
 * float16.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, PoptfjsError, dtypeOf, half, inferenceModel, isFloat16Value, isHalf, optim, roundFloat16Array, trainingModel } from 'poptfjs';
import { paramValues, valueElementBytes } from '../../lib/ir/graph.js';
import { variableOf } from '../helpers.js';

/** `t` with every element rounded to the nearest float16. */
function rounded(t: tf.Tensor): tf.Tensor {
  return tf.tensor(roundFloat16Array(t.dataSync() as Float32Array), t.shape);
}

function allFloat16(t: tf.Tensor): boolean {
  return Array.from(t.dataSync()).every(isFloat16Value);
}

function denseModel(units: number, inputs: number, seed: number): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({
        units,
        inputShape: [inputs],
        kernelInitializer: tf.initializers.glorotUniform({ seed }),
        biasInitializer: tf.initializers.randomNormal({ seed: seed + 1 }),
      }),
    ],
  });
}

describe('half', () => {
  it("rounds a model's weights to float16 in place and marks them", () => {
    const model = denseModel(3, 5, 1);
    const before = model.getWeights().map((w) => w.clone());
    expect(half(model)).toBe(model);
    model.getWeights().forEach((w, i) => {
      expect(Array.from(w.dataSync())).toEqual(Array.from(rounded(before[i]!).dataSync()));
    });
    for (const w of model.weights) expect(isHalf(variableOf(w))).toBe(true);
  });

  it('makes a float16 copy of a tensor, and refuses what cannot be float16', () => {
    const x = tf.tensor([1 / 3, 70000, 1e-9]);
    const h = half(x);
    expect(h).not.toBe(x);
    expect(dtypeOf(h)).toBe('float16');
    expect(dtypeOf(x)).toBe('float32');
    expect(Array.from(h.dataSync())).toEqual([0.333251953125, Infinity, 0]);
    expect(() => half(tf.tensor([1], undefined, 'int32'))).toThrow(/only float32 tensors can be made float16/);
    expect(() => half({} as tf.Tensor)).toThrow(PoptfjsError);
  });
});

describe('float16 models', () => {
  it('compute every op with float16 inputs in float16 (float32 arithmetic, result rounded) and report float16 outputs', async () => {
    const model = half(denseModel(4, 6, 2));
    const x = half(tf.randomNormal([3, 6], 0, 1, 'float32', 3));
    const executor = inferenceModel(model);
    const out = (await executor.run(x)) as tf.Tensor;
    expect(executor.outputDtypes()).toEqual(['float16']);
    expect(dtypeOf(out)).toBe('float16');
    const [kernel, bias] = model.getWeights();
    const expected = rounded(tf.add(tf.matMul(x, kernel!), bias!));
    expect(Array.from(out.dataSync())).toEqual(Array.from(expected.dataSync()));
  });

  it('compute an op meeting float16 values and float32 weights in float16, the weights converted as PopTorch does, whatever the casting', async () => {
    const x = half(tf.randomNormal([2, 5], 0, 1, 'float32', 4));
    const run = async (options?: Options) => {
      const first = half(denseModel(6, 5, 5));
      const second = denseModel(3, 6, 7);
      const model = tf.sequential({ layers: [...first.layers, ...second.layers] });
      const executor = inferenceModel(model, options ? { options } : {});
      const out = (await executor.run(x)) as tf.Tensor;
      const [k1, b1] = first.getWeights();
      const [k2, b2] = second.getWeights();
      const hidden = rounded(tf.add(tf.matMul(x, k1!), b1!));
      return { out, dtypes: executor.outputDtypes(), reference: rounded(tf.add(tf.matMul(hidden, rounded(k2!)), b2!)) };
    };
    const options = new Options();
    options.Precision.halfFloatCasting('FloatDowncastToHalf');
    for (const { out, dtypes, reference } of [await run(), await run(options)]) {
      expect(dtypes).toEqual(['float16']);
      expect(Array.from(out.dataSync())).toEqual(Array.from(reference.dataSync()));
    }
  });

  it('compute an op mixing float16 and float32 activations in float32, or in float16 with FloatDowncastToHalf', async () => {
    const add = (a: tf.Tensor, b: tf.Tensor) => tf.add(a, b);
    const a = half(tf.tensor1d([1, 2]));
    const b = tf.tensor1d([0.1, 1 / 3]);
    const upcast = inferenceModel(add);
    const up = (await upcast.run(a, b)) as tf.Tensor;
    expect(upcast.outputDtypes()).toEqual(['float32']);
    expect(Array.from(up.dataSync())).toEqual(Array.from(tf.add(a, b).dataSync()));
    const options = new Options();
    options.Precision.halfFloatCasting('FloatDowncastToHalf');
    const downcast = inferenceModel(add, { options });
    const down = (await downcast.run(a, b)) as tf.Tensor;
    expect(downcast.outputDtypes()).toEqual(['float16']);
    expect(Array.from(down.dataSync())).toEqual(Array.from(rounded(tf.add(a, rounded(b))).dataSync()));
  });

  it('take float16 inputs rounded on the way in', async () => {
    const model = half(denseModel(2, 3, 8));
    const x = tf.tensor([[1 / 3, 2 / 3, 0.1]]);
    const executor = inferenceModel(model);
    await executor.compile(half(x));
    const fromFloat32 = (await executor.run(x)) as tf.Tensor;
    const fromFloat16 = (await executor.run(half(x))) as tf.Tensor;
    expect(Array.from(fromFloat32.dataSync())).toEqual(Array.from(fromFloat16.dataSync()));
  });

  it('hold float16 parameters in 2 bytes per element on the device', async () => {
    const model = half(denseModel(4, 6, 9));
    const executor = inferenceModel(model);
    await executor.compile(half(tf.ones([1, 6])));
    const params = [...paramValues(executor.executable.graph).values()];
    expect(params.map((v) => [v.precision, valueElementBytes(v)])).toEqual([
      ['float16', 2],
      ['float16', 2],
    ]);
    const float32 = inferenceModel(denseModel(4, 6, 9));
    await float32.compile(tf.ones([1, 6]));
    expect([...paramValues(float32.executable.graph).values()].map(valueElementBytes)).toEqual([4, 4]);
  });

  it('train with float16 weights that stay float16, and keep buffers float32 when runningStatisticsAlwaysFloat', async () => {
    const model = half(tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [3] }), tf.layers.batchNormalization(), tf.layers.dense({ units: 1 })] }));
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.05, momentum: 0.5 }) });
    const x = half(tf.randomNormal([8, 3], 0, 1, 'float32', 10));
    const y = tf.randomNormal([8, 1], 0, 1, 'float32', 11);
    for (let i = 0; i < 5; i++) await executor.run(x, y);
    const precisions = new Map([...paramValues(executor.executable.graph)].map(([name, v]) => [name, v.precision ?? 'float32']));
    const buffers = model.layers[1]!.nonTrainableWeights.map((w) => w.name);
    for (const [name, precision] of precisions) expect(precision).toBe(buffers.includes(name) ? 'float32' : 'float16');
    executor.copyWeightsToHost();
    for (const w of model.trainableWeights) expect(allFloat16(w.read())).toBe(true);
  });
});

describe('opts.Precision', () => {
  const justAbove1 = 1 + 2 ** -12;

  it('enableStochasticRounding rounds float16 results without bias, deterministically under randomSeed', async () => {
    const scale = (x: tf.Tensor) => tf.mul(x, justAbove1);
    const x = half(tf.ones([1, 8192]));
    const run = async (stochastic: boolean, seed: number) => {
      const options = new Options().randomSeed(seed);
      options.Precision.enableStochasticRounding(stochastic);
      return (await inferenceModel(scale, { options }).run(x)) as tf.Tensor;
    };
    const nearest = await run(false, 1);
    expect(tf.mean(nearest).dataSync()[0]).toBe(1);
    const first = await run(true, 1);
    expect(allFloat16(first)).toBe(true);
    const p = 0.25;
    const sigma = Math.sqrt((p * (1 - p)) / 8192) * 2 ** -10;
    expect(Math.abs(tf.mean(first).dataSync()[0]! - justAbove1)).toBeLessThan(4 * sigma);
    expect(Array.from((await run(true, 1)).dataSync())).toEqual(Array.from(first.dataSync()));
    expect(Array.from((await run(true, 2)).dataSync())).not.toEqual(Array.from(first.dataSync()));
  });

  it('setPartialsType("half") keeps the running sums of float16 matmuls and convolutions in float16', async () => {
    const K = 64;
    const small = [1, ...new Array<number>(K - 1).fill(2 ** -11)];
    const exact = 1 + (K - 1) * 2 ** -11;
    const w = half(tf.variable(tf.tensor2d(small, [K, 1]), true, 'partials_w'));
    const filter = half(tf.variable(tf.tensor4d(small, [1, 1, K, 1]), true, 'partials_filter'));
    const dense = half(tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [K], kernelInitializer: 'ones', biasInitializer: 'ones' })] }));
    dense.setWeights([tf.tensor2d(small, [K, 1]), tf.tensor1d([0.5])]);
    half(dense);
    const cases: Array<[string, (o: Options) => Promise<tf.Tensor>, number]> = [
      ['BatchMatMul', async (o) => (await inferenceModel((x: tf.Tensor) => tf.matMul(x, w), { options: o }).run(half(tf.ones([1, K])))) as tf.Tensor, 0],
      [
        'Conv2D',
        async (o) =>
          (await inferenceModel((x: tf.Tensor) => tf.conv2d(x as tf.Tensor4D, filter as unknown as tf.Tensor4D, 1, 'valid'), { options: o }).run(
            half(tf.ones([1, 1, 1, K])),
          )) as tf.Tensor,
        0,
      ],
      ['_FusedMatMul with bias', async (o) => (await inferenceModel(dense, { options: o }).run(half(tf.ones([1, K])))) as tf.Tensor, 0.5],
    ];
    for (const [, run, bias] of cases) {
      const float = await run(new Options());
      expect(float.dataSync()[0]).toBe(rounded(tf.scalar(exact + bias)).dataSync()[0]);
      const options = new Options();
      options.Precision.setPartialsType('half');
      // Sequentially, each 2^-11 added to 1 is a tie that rounds back to 1 (even).
      expect((await run(options)).dataSync()[0]).toBe(1 + bias);
    }
  });

  it('enableFloatingPointExceptions raises on Inf or NaN made from finite values, naming the kernel', async () => {
    const grow = (x: tf.Tensor) => tf.mul(x, 1000);
    const x = half(tf.tensor([[100]]));
    expect(Array.from(((await inferenceModel(grow).run(x)) as tf.Tensor).dataSync())).toEqual([Infinity]);
    const options = new Options();
    options.Precision.enableFloatingPointExceptions(true);
    await expect(inferenceModel(grow, { options }).run(x)).rejects.toThrow(
      /floating-point exception: node #\d+ Multiply produced Inf \(overflow or division by zero\) in its float16 result 0 from finite inputs/,
    );
    const log = (t: tf.Tensor) => tf.log(t);
    await expect(inferenceModel(log, { options: options.clone() }).run(tf.tensor([[0]]))).rejects.toThrow(/Log produced Inf .* in its float32 result/);
    expect(Array.from(((await inferenceModel(log, { options: options.clone() }).run(tf.tensor([[Infinity]]))) as tf.Tensor).dataSync())).toEqual([Infinity]);
  });
});
