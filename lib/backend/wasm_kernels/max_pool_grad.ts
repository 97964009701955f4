/**
 * `MaxPoolGrad` for the wasm backend, from whole-tensor kernels (XNNPACK
 * depthwise convolutions and arithmetic, transposes), with the cpu backend's
 * choice of the element that gets the gradient.
 *
 * The cpu kernel (`maxPoolPositions`) gives a window's gradient to the first
 * of its largest elements in row-major window order, skipping the padding,
 * and an element gets the sum of what it wins in every window. Here each tap
 * of every window is a tensor in window order (see {@link PoolWindowTaps};
 * taps in the padding read the lowest float), the window maxima are the
 * forward output (the `output` input), and the taps are visited in row-major
 * order carrying the part of `dy` no earlier tap took: a tap equal to the
 * maximum (`Step(max - tap) = 0`) takes all of it, the others none, and the
 * last tap takes what is left, since a window whose earlier taps all lie
 * below its maximum has its maximum there. The taps' gradients are then
 * added back onto the input.
 *
 * The wasm backend's own kernel is a naive loop (20-40 ms for a small CNN's
 * [64, 28, 28, 16] pooling); its `MaxPoolWithArgmax` cannot stand in, as it
 * keeps the last of equal elements and starts from the smallest positive
 * float rather than -∞. The inputs must be finite and above the lowest
 * float, as they are in training: the cpu kernel's handling of NaN and
 * infinite elements is not reproduced. When `dimRoundingMode` 'ceil' adds
 * windows beyond the padding, the wasm `MaxPool` leaves their maxima wrong,
 * so they are recomputed from the padded input instead.
 */
import * as tf from '@tensorflow/tfjs';
import { KernelCallScope } from './kernel_call_scope.js';
import { PoolWindowTaps } from './pool_window_taps.js';

const BACKEND = 'wasm';
/** What taps in the padding read: below every element, and finite, as the taps are read by multiplying with zeros. */
const LOWEST_FLOAT32 = -3.4028234663852886e38;

/** True if the input and its padding hold every window (false when `dimRoundingMode` 'ceil' adds a window beyond the padding). */
function windowsInPadding({ outHeight, outWidth, strideHeight, strideWidth, filterHeight, filterWidth, inHeight, inWidth, padInfo }: tf.backend_util.Conv2DInfo): boolean {
  return (
    (outHeight - 1) * strideHeight + filterHeight <= padInfo.top + inHeight + padInfo.bottom &&
    (outWidth - 1) * strideWidth + filterWidth <= padInfo.left + inWidth + padInfo.right
  );
}

function maxPoolGrad({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { dy, input, output } = inputs as { dy: tf.TensorInfo; input: tf.TensorInfo; output: tf.TensorInfo };
  const { filterSize, strides, pad, dimRoundingMode } = attrs as unknown as tf.MaxPoolGradAttrs;
  const info = tf.backend_util.computePool2DInfo(input.shape as [number, number, number, number], filterSize, strides, 1, pad, dimRoundingMode);
  return KernelCallScope.run(BACKEND, backend as tf.KernelBackend, (k) => {
    const taps = new PoolWindowTaps(k, info);
    const window = taps.window(input, LOWEST_FLOAT32);
    const max = windowsInPadding(info)
      ? output
      : k.call(tf.MaxPool, { x: window }, { filterSize: [info.filterHeight, info.filterWidth], strides: [info.strideHeight, info.strideWidth], pad: 'valid' });
    const values = taps.values(window);
    let left = dy;
    const perTap = values.map((value, t) => {
      if (t === values.length - 1) return left;
      const belowMax = k.call(tf.Step, { x: k.call(tf.Sub, { a: max, b: value }) }, { alpha: 0 });
      const passed = k.call(tf.Multiply, { a: left, b: belowMax });
      const taken = k.call(tf.Sub, { a: left, b: passed });
      left = passed;
      return taken;
    });
    return taps.gradient(perTap);
  });
}

/** The wasm kernel of `MaxPoolGrad` (any filter, stride and padding; the cpu backend's tie-breaking). */
export const maxPoolGradConfig: tf.KernelConfig = {
  kernelName: tf.MaxPoolGrad,
  backendName: BACKEND,
  kernelFunc: maxPoolGrad,
};
