/**
 * `MaxPoolGrad` for the wasm backend, as one pass over the wasm heap with
 * the cpu backend's choice of the element that gets the gradient.
 *
 * The cpu kernel (`maxPoolPositions`) gives a window's gradient to the first
 * of its largest elements in row-major window order, skipping the padding
 * (an element above -∞; a window of NaN and -∞ only gives its gradient to
 * no element), and an element gets the sum of what it wins in every window,
 * summed in double precision in row-major window order. This kernel does the
 * same where the tensors lie, reading the input and `dy` once and writing
 * the result once. Windows that do not overlap, with channels in fours (the
 * usual 2×2 pooling of a CNN), run a WebAssembly SIMD routine (see
 * {@link maxPoolGradSimd}): 0.9 ms for a small CNN's [64, 28, 28, 16]
 * pooling, against 20-40 ms for the wasm backend's own kernel and about
 * 3 ms for a composition of whole-tensor XNNPACK kernels. Other poolings run
 * a JavaScript loop (about 3 ms there: its branches are hard to predict).
 * The winners come from the input, as in the cpu kernel, so the forward
 * output (the `output` input) is not read.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { maxPoolGradSimd } from './max_pool_grad_simd.js';
import { wasmMemory } from './wasm_simd_routine.js';

const BACKEND = 'wasm';

/**
 * Adds each window's `dy` (`[batch, outHeight, outWidth, channels]`) into
 * `sums` (the input's shape, zeros) at the window's winning input element.
 */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: the loop nest over images, windows and channels of one pass, the kernel's inner loop: a call per window would cost more than the window
function addWinnersGradients(info: tf.backend_util.Conv2DInfo, x: Float32Array, dy: Float32Array, sums: Float32Array | Float64Array): void {
  const { batchSize, inHeight, inWidth, inChannels: channels, outHeight, outWidth, strideHeight, strideWidth, filterHeight, filterWidth, padInfo } = info;
  const largest = new Float32Array(channels);
  const winner = new Int32Array(channels);
  const rowLength = inWidth * channels;
  let window = 0;
  for (let b = 0; b < batchSize; b++) {
    const image = b * inHeight * rowLength;
    for (let oy = 0; oy < outHeight; oy++) {
      const top = oy * strideHeight - padInfo.top;
      const rowEnd = Math.min(inHeight, top + filterHeight);
      for (let ox = 0; ox < outWidth; ox++, window += channels) {
        const left = ox * strideWidth - padInfo.left;
        const colStart = Math.max(0, left) * channels;
        const colEnd = Math.min(inWidth, left + filterWidth) * channels;
        largest.fill(Number.NEGATIVE_INFINITY);
        winner.fill(-1);
        for (let y = Math.max(0, top); y < rowEnd; y++) {
          const row = image + y * rowLength;
          for (let at = row + colStart, end = row + colEnd; at < end; at += channels) {
            for (let c = 0; c < channels; c++) {
              const value = x[at + c]!;
              if (value > largest[c]!) {
                largest[c] = value;
                winner[c] = at + c;
              }
            }
          }
        }
        for (let c = 0; c < channels; c++) {
          const at = winner[c]!;
          if (at >= 0) sums[at]! += dy[window + c]!;
        }
      }
    }
  }
}

function maxPoolGrad({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { dy, input } = inputs as { dy: tf.TensorInfo; input: tf.TensorInfo };
  const { filterSize, strides, pad, dimRoundingMode } = attrs as unknown as tf.MaxPoolGradAttrs;
  const info = tf.backend_util.computePool2DInfo(input.shape as [number, number, number, number], filterSize, strides, 1, pad, dimRoundingMode);
  const wasm = backend as BackendWasm;
  const out = wasm.makeOutput(input.shape, 'float32');
  const dx = wasm.typedArrayFromHeap(out) as Float32Array;
  const x = wasm.typedArrayFromHeap(input) as Float32Array;
  const gradient = wasm.typedArrayFromHeap(dy) as Float32Array;
  // Where windows overlap, an element can win several: sum in double precision, as the cpu kernel does.
  const overlapping = info.filterHeight > info.strideHeight || info.filterWidth > info.strideWidth;
  if (overlapping) {
    const sums = new Float64Array(dx.length);
    addWinnersGradients(info, x, gradient, sums);
    dx.set(sums);
  } else {
    // The SIMD routine writes every element some window reads: windows that tile the input leave none to zero.
    const { filterHeight, filterWidth, strideHeight, strideWidth, inHeight, inWidth, outHeight, outWidth, padInfo } = info;
    const tiling =
      filterHeight === strideHeight &&
      filterWidth === strideWidth &&
      padInfo.top === 0 &&
      padInfo.left === 0 &&
      outHeight * strideHeight === inHeight &&
      outWidth * strideWidth === inWidth;
    if (!tiling) dx.fill(0);
    if (!maxPoolGradSimd(wasmMemory(wasm), info, x.byteOffset, gradient.byteOffset, dx.byteOffset)) {
      if (tiling) dx.fill(0);
      addWinnersGradients(info, x, gradient, dx);
    }
  }
  return out;
}

/** The wasm kernel of `MaxPoolGrad` (any filter, stride and padding; the cpu backend's tie-breaking and sums). */
export const maxPoolGradConfig: tf.KernelConfig = {
  kernelName: tf.MaxPoolGrad,
  backendName: BACKEND,
  kernelFunc: maxPoolGrad,
};
