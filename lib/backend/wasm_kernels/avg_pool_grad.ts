/**
 * `AvgPoolGrad` for the wasm backend, from whole-tensor kernels: every tap
 * of a window gets `dy / (filterHeight·filterWidth)` (the cpu kernel's
 * divisor, padding included), added back onto the input through
 * {@link PoolWindowTaps}. The wasm backend's own kernel is a naive loop
 * (8 ms for a 2×2 pooling of [64, 28, 28, 16], against about 1 ms here).
 */
import * as tf from '@tensorflow/tfjs';
import { KernelCallScope } from './kernel_call_scope.js';
import { PoolWindowTaps } from './pool_window_taps.js';

const BACKEND = 'wasm';

function avgPoolGrad({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { dy, input } = inputs as { dy: tf.TensorInfo; input: tf.TensorInfo };
  const { filterSize, strides, pad } = attrs as unknown as tf.AvgPoolGradAttrs;
  const info = tf.backend_util.computePool2DInfo(input.shape as [number, number, number, number], filterSize, strides, 1, pad);
  return KernelCallScope.run(BACKEND, backend as tf.KernelBackend, (k) => {
    const taps = new PoolWindowTaps(k, info);
    const divisor = k.call(tf.Fill, {}, { shape: [], value: info.filterHeight * info.filterWidth, dtype: 'float32' });
    const share = k.call(tf.RealDiv, { a: dy, b: divisor });
    return taps.gradient(new Array<tf.TensorInfo>(taps.count).fill(share));
  });
}

/** The wasm kernel of `AvgPoolGrad` (any filter, stride and padding). */
export const avgPoolGradConfig: tf.KernelConfig = {
  kernelName: tf.AvgPoolGrad,
  backendName: BACKEND,
  kernelFunc: avgPoolGrad,
};
