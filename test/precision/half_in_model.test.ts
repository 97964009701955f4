/**
 * `half(x)` inside a model, as PyTorch's `x.half()` in `forward`: a value the
 * model computes (an input, an activation, a random draw) becomes float16 in
 * the graph, run by the device each time. Written from PopTorch's
 * tests/half_test.py (test_half_casts_outplace, test_8bit_io_casting) and
 * tests/half_float_test.py (test_rand_default_input_resolved_always_float16,
 * test_constant_add_float16).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { dtypeOf, half, inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import { isFloat16Value, roundToFloat16 } from '../../lib/precision/float16.js';

const values = (t: tf.Tensor) => Array.from(t.dataSync());

describe('half(x) inside a model', () => {
  it('casts inputs in the graph: the cast outputs are float16, the others float32 (test_half_casts_outplace)', async () => {
    const executor = inferenceModel((x1: tf.Tensor, x2: tf.Tensor) => [x1, x2, half(x1), half(x2)]);
    const x1 = tf.tensor1d([1.0001, 70000]);
    const x2 = tf.tensor1d([-2.5713, 0.1]);
    const out = (await executor.run(x1, x2)) as tf.Tensor[];
    expect(executor.outputDtypes()).toEqual(['float32', 'float32', 'float16', 'float16']);
    expect(out.map(dtypeOf)).toEqual(['float32', 'float32', 'float16', 'float16']);
    expect(values(out[0]!)).toEqual(values(x1));
    // Round to nearest even; beyond the largest float16 is infinity.
    expect(values(out[2]!)).toEqual([1, Infinity]);
    expect(values(out[3]!)).toEqual([roundToFloat16(-2.5713), roundToFloat16(0.1)]);
    expect(executor.irText()).toMatch(/= poptfjs\.Float16Cast\(x=%0\)/);
    executor.destroy();
  });

  it('casts activations: a float32 layer fed half(x) computes in float16 on its weights rounded to float16 (test_8bit_io_casting)', async () => {
    const dense = tf.layers.dense({
      units: 1,
      inputShape: [1],
      kernelInitializer: tf.initializers.constant({ value: 1.0003 }),
      biasInitializer: tf.initializers.constant({ value: 0.1 }),
    });
    const model = (x: tf.Tensor) => {
      const h = tf.mul(x, 1.5);
      return [dense.apply(half(h)) as tf.Tensor, dense.apply(h) as tf.Tensor];
    };
    const executor = inferenceModel(model);
    const [y16, y32] = (await executor.run(tf.tensor2d([[2.0001]]))) as tf.Tensor[];
    expect([dtypeOf(y16!), dtypeOf(y32!)]).toEqual(['float16', 'float32']);
    const h = roundToFloat16(Math.fround(Math.fround(2.0001) * 1.5));
    expect(values(y16!)).toEqual([roundToFloat16(roundToFloat16(h * roundToFloat16(1.0003)) + roundToFloat16(0.1))]);
    expect(values(y32!)[0]).toBeCloseTo(2.0001 * 1.5 * 1.0003 + 0.1, 5);
    executor.destroy();
  });

  it('draws a random draw made float16 afresh on every run, in float16 (test_rand_default_input_resolved_always_float16)', async () => {
    const executor = inferenceModel((input: tf.Tensor) => tf.add(half(tf.randomUniform([3, 5, 100])), input));
    const input = half(tf.tensor1d([1]));
    const first = (await executor.run(input)) as tf.Tensor;
    const second = (await executor.run(input)) as tf.Tensor;
    expect([dtypeOf(first), dtypeOf(second)]).toEqual(['float16', 'float16']);
    expect(values(first).every(isFloat16Value)).toBe(true);
    expect(values(first).every((v) => v >= 1 && v <= 2)).toBe(true);
    expect(values(first)).not.toEqual(values(second));
    expect(executor.executable.graph.nodes.map((n) => n.kernel)).toEqual(['poptfjs.RandomUniform', 'poptfjs.Float16Cast', 'Add']);
    // With a float32 input of the same rank, PyTorch's promotion gives float32.
    const float = inferenceModel((x: tf.Tensor) => tf.add(half(tf.randomUniform([3, 5, 100])), x));
    expect(dtypeOf((await float.run(tf.ones([3, 5, 100]))) as tf.Tensor)).toBe('float32');
    executor.destroy();
    float.destroy();
  });

  it('keeps the float16 mark of a large constant made in the model (a Fill of the graph): its sum overflows float16', async () => {
    const executor = inferenceModel((x: tf.Tensor) => tf.add(half(x), tf.sum(half(tf.ones([300, 300])))));
    const out = (await executor.run(tf.tensor1d([1]))) as tf.Tensor;
    const fill = executor.executable.graph.values.find((v) => v.shape.length === 2 && v.shape[0] === 300)!;
    expect(fill.precision).toBe('float16');
    // 90,000 ones: beyond float16's largest finite value, 65,504.
    expect(values(out)).toEqual([Infinity]);
    expect(dtypeOf(out)).toBe('float16');
    executor.destroy();
  });

  it('passes the gradient through the cast when training', async () => {
    const w = tf.variable(tf.tensor2d([[1], [2]]), true, 'half_cast_w');
    const executor = trainingModel((x: tf.Tensor) => ops.identityLoss(tf.sum(half(tf.matMul(x, w))), 'sum'), { optimizer: new optim.SGD([w], { lr: 0.5 }) });
    const [, loss] = (await executor.run(
      tf.tensor2d([
        [1, 2],
        [3, 4],
      ]),
    )) as [tf.Tensor, tf.Tensor];
    // The loss is 5 + 11 = 16; its gradient by w is xᵀ·1 = [4, 6]: w ← [1 − 2, 2 − 3].
    expect(values(loss)).toEqual([16]);
    executor.copyWeightsToHost();
    expect(values(w)).toEqual([-1, -1]);
    executor.destroy();
  });
});
