import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { productFlops } from '../../bench/product_flops.js';
import { useWasmTrainingBackend } from '../backend/wasm_kernels/kernel_reference.js';

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
});
