import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { productFlops } from '../../bench/product_flops.js';
import { useWasmTrainingBackend } from '../backend/wasm_kernels/kernel_reference.js';
import { withRelaxedSimd } from '../helpers.js';

withRelaxedSimd();
beforeAll(useWasmTrainingBackend);

describe("the session benchmark's count of convolution and product FLOPs", () => {
  it('counts 2 per multiply-add of each convolution and product a run calls, padding taps included, and nothing else', async () => {
    const x = tf.ones([1, 5, 5, 3]) as tf.Tensor4D;
    const filter = tf.ones([3, 3, 3, 8]) as tf.Tensor4D;
    const depthwise = tf.ones([3, 3, 8, 1]) as tf.Tensor4D;
    const a = tf.ones([2, 4, 6]);
    const b = tf.ones([2, 6, 7]);
    const own = tf.getKernel('Conv2D', 'wasm')!.kernelFunc;
    const flops = await productFlops(() =>
      tf.tidy(() => {
        const y = tf.conv2d(x, filter, 1, 'same'); // 5 · 5 · 8 outputs of 3 · 3 · 3 multiply-adds
        const z = tf.depthwiseConv2d(y.relu() as tf.Tensor4D, depthwise, 1, 'same'); // 5 · 5 · 8 outputs of 3 · 3
        tf.matMul(a, b); // 2 · 4 · 7 outputs of 6
        return z.sum();
      }),
    );
    expect(flops).toBe(2 * (5 * 5 * 8 * 27 + 5 * 5 * 8 * 9 + 2 * 4 * 7 * 6));
    // The kernels are left as they were.
    expect(tf.getKernel('Conv2D', 'wasm')!.kernelFunc).toBe(own);
    tf.dispose([x, filter, depthwise, a, b]);
  });

  it("counts a marked 3 × 3 convolution at stride 1 by F(2 × 2, 3 × 3)'s products: 16 multiply-adds per tile and channel pair", async () => {
    const x = tf.ones([1, 5, 7, 4]);
    const attrs = { strides: 1, pad: 'same', dataFormat: 'NHWC', dilations: 1, activation: 'relu', multiplyAdd: 'fused' };
    const winograd = tf.ones([3, 3, 4, 8]);
    const pointwise = tf.ones([1, 1, 4, 8]);
    const flops = await productFlops(() =>
      tf.tidy(() => {
        tf.engine().runKernel('FusedConv2D', { x, filter: winograd }, attrs); // 3 · 4 tiles of 2 × 2 outputs, 4 · 8 channel pairs
        tf.engine().runKernel('FusedConv2D', { x, filter: pointwise }, attrs); // 5 · 7 · 8 outputs of 4 multiply-adds
      }),
    );
    expect(flops).toBe(2 * (16 * 12 * 4 * 8 + 5 * 7 * 8 * 4));
    tf.dispose([x, winograd, pointwise]);
  });
});
