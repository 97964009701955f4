/**
 * float16 as PopTorch types it: float32 weights meeting a float16 input are
 * converted to float16 (PopTorch's user guide, "16-bit float support", and
 * half_test.py's test_8bit_io_casting: a float32 Linear on a half input gives
 * a half output); float16 constants made inside a model stay float16; and a
 * comparison with a NaN operand raises a floating-point exception when
 * `Precision.enableFloatingPointExceptions` is on.
 *
 * Reference numbers by hand: float16(0.1) = 0.0999755859375; float16 numbers
 * in [4, 8) are 2⁻⁸ apart.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, dtypeOf, half, inferenceModel, optim, trainingModel } from 'poptfjs';

const FLOAT16_TENTH = 0.0999755859375;

/** Dense(1) without bias, kernel [0.1, 0.5, 0.25]ᵀ, in float32. */
function float32Dense(): tf.Sequential {
  const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [3], useBias: false })] });
  model.setWeights([tf.tensor2d([[0.1], [0.5], [0.25]])]);
  return model;
}

describe('float16 type promotion', () => {
  it('a float16 input converts float32 weights to float16: the output is float16', async () => {
    const x = [[2, 4, 8]];
    const executor = inferenceModel(float32Dense());
    const out = (await executor(half(tf.tensor2d(x)))) as tf.Tensor;
    // 2 · float16(0.1) + 4 · 0.5 + 8 · 0.25 = 4.199951171875, rounded to float16: 1075 · 2⁻⁸
    expect(Array.from(out.dataSync())).toEqual([1075 / 256]);
    expect(dtypeOf(out)).toBe('float16');
    expect(executor.outputDtypes()).toEqual(['float16']);

    const float32 = (await inferenceModel(float32Dense())(tf.tensor2d(x))) as tf.Tensor;
    expect(float32.dataSync()[0]).toBeCloseTo(4.2, 6);
    expect(dtypeOf(float32)).toBe('float32');
  });

  it('training keeps float32 weights in float32: their update is made in float32 from the float16 gradient', async () => {
    const model = float32Dense();
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
    const [out, loss] = await executor(half(tf.tensor2d([[2, 4, 8]])), tf.tensor2d([[4]]));
    expect(dtypeOf(out as tf.Tensor)).toBe('float16');
    // out = 1075/256, loss = (out - 4)² in float32 (the target is float32); ∂loss/∂out = 2 (out - 4) = 51/128,
    // ∂loss/∂kernel = [2, 4, 8] · 51/128, exact in float16; the update starts from the float32 kernel.
    expect(loss.dataSync()[0]).toBe(Math.fround((1075 / 256 - 4) ** 2));
    const kernel = Array.from(model.getWeights()[0]!.dataSync());
    [0.1, 0.5, 0.25].forEach((w, i) => expect(kernel[i]).toBeCloseTo(w - (0.1 * [2, 4, 8][i]! * 51) / 128, 7));
  });

  it('a float16 constant made inside the model stays float16', async () => {
    const scale = (x: tf.Tensor) => tf.mul(x, half(tf.tensor1d([0.1, 3])));
    const halfOut = (await inferenceModel(scale)(half(tf.tensor1d([2, 2])))) as tf.Tensor;
    expect(Array.from(halfOut.dataSync())).toEqual([2 * FLOAT16_TENTH, 6]);
    expect(dtypeOf(halfOut)).toBe('float16');
    // With a float32 input the op mixes float32 and float16: float32, computed on the constant's float16 values.
    const floatOut = (await inferenceModel(scale)(tf.tensor1d([2, 2]))) as tf.Tensor;
    expect(dtypeOf(floatOut)).toBe('float32');
    expect(Array.from(floatOut.dataSync())).toEqual([Math.fround(2 * FLOAT16_TENTH), 6]);

    const constant = inferenceModel(() => half(tf.tensor1d([0.1, 3])));
    const returned = (await constant()) as tf.Tensor;
    expect(constant.outputDtypes()).toEqual(['float16']);
    expect(Array.from(returned.dataSync())).toEqual([FLOAT16_TENTH, 3]);
  });
});

describe('floating-point exceptions on comparisons', () => {
  const compare = (a: tf.Tensor, b: tf.Tensor) => tf.greater(a, b);
  const a = tf.tensor1d([1, NaN, 3]);
  const b = tf.tensor1d([0, 0, 4]);

  it('a comparison with a NaN operand raises when exceptions are enabled', async () => {
    const options = new Options();
    options.Precision.enableFloatingPointExceptions(true);
    await expect(inferenceModel(compare, { options })(a, b)).rejects.toThrow(
      /^floating-point exception: node #\d+ Greater compared NaN \(invalid operation\) in its operand 0; call opts\.Precision\.enableFloatingPointExceptions\(false\) to compare NaN without an exception$/,
    );
    const halfOptions = new Options();
    halfOptions.Precision.enableFloatingPointExceptions(true);
    await expect(inferenceModel((x: tf.Tensor) => tf.lessEqual(tf.scalar(1), x), { options: halfOptions })(half(tf.tensor1d([2, NaN])))).rejects.toThrow(
      /LessEqual compared NaN \(invalid operation\) in its operand 1/,
    );
  });

  it('compares NaN as false without exceptions, and finite operands raise nothing', async () => {
    expect(Array.from(((await inferenceModel(compare)(a, b)) as tf.Tensor).dataSync())).toEqual([1, 0, 0]);
    const options = new Options();
    options.Precision.enableFloatingPointExceptions(true);
    expect(Array.from(((await inferenceModel(compare, { options })(b, a.isNaN().logicalNot().cast('float32'))) as tf.Tensor).dataSync())).toEqual([0, 0, 1]);
  });
});
