/**
 * `Conv2DBackpropFilter` for the wasm backend: SIMD routines for the
 * common NHWC cases, else one XNNPACK convolution (or, for a single input
 * channel, one depthwise convolution).
 *
 * The filter gradient `dW[i, j, ci, co] = Σ_b,y,x x[b, y·s + i - pad, x·s + j - pad, ci] · dy[b, y, x, co]`
 * is itself a convolution once the batch and channel axes of `x` are swapped:
 * the input is `x` as `[inChannels, height, width, batch]` (channels become
 * images, examples become channels), the filter is `dy` as
 * `[outHeight, outWidth, batch, outChannels]`, the forward stride becomes the
 * dilation, the forward dilation the stride, and the forward padding becomes
 * explicit padding (or a crop where the forward convolution never read the
 * last rows). The result `[inChannels, filterHeight, filterWidth, outChannels]`
 * is transposed into the filter's layout. NCHW inputs only change the two
 * transposes.
 *
 * XNNPACK packs that filter anew at every call (it is a new `dy` each
 * time), which costs about as much as the arithmetic. So, in this order:
 * NHWC convolutions with few taps (`filterHeight·filterWidth·inChannels`,
 * a first layer) and output channels in sixteens run a WebAssembly SIMD
 * routine instead (see {@link conv2dBackpropFilterSimd}): 0.75 ms for a
 * [64, 28, 28, 1] input and 16 output channels. Other stride-1 NHWC
 * convolutions without dilation whose output channels are a multiple of 4
 * compute the gradient as one product of the transposed im2col of `x` and
 * `dy`, both by SIMD routines that read `dy` as it is (see
 * `byTransposedIm2col`; measured interleaved against the XNNPACK paths at
 * load 1.1: 2.8-2.9 against 3.9-4.0 ms for a [64, 14, 14, 16] input and 32
 * output channels, 2.6 against 4.8-4.9 ms for [2, 32, 32, 64] and 64),
 * unless the im2col would exceed
 * {@link IM2COL_MAX_BYTES}. Other stride-1 convolutions whose input is
 * smaller than `dy` make `x` the filter (see `inputAsFilter`).
 * Otherwise, with one input
 * channel (the first layer of a network on grayscale images) the filter
 * gradient is a depthwise filter gradient with the output channels as the
 * channel multiplier, whose depthwise convolution packs `dy` as its filter
 * far faster than the convolution above does (2.5-3.4 against 6-12 ms for
 * that input).
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { matMulSimdOnThreads, PLAIN_PRODUCT, type ProductVariant, simdProductFits } from './batch_mat_mul_simd.js';
import { conv2dBackpropFilterSimd } from './conv2d_backprop_filter_simd.js';
import { KernelCallScope } from './kernel_call_scope.js';
import { wasmMemory } from './wasm_simd_routine.js';
import { transposedIm2colSimd } from './transposed_im2col_simd.js';
import { filterGradientPadding, fitToPadding, padToExtent } from './window_padding.js';

const BACKEND = 'wasm';

type Pad = tf.Conv2DBackpropFilterAttrs['pad'];

/** `pad` for the same convolution in NHWC: explicit NCHW padding reordered, the rest as it is. */
function channelsLastPad(pad: Pad, channelsLast: boolean): Pad {
  if (channelsLast || !Array.isArray(pad)) return pad;
  const [batch, channels, rows, cols] = pad;
  return [batch, rows, cols, channels];
}

/** The most bytes of the transposed im2col that {@link byTransposedIm2col} makes; larger gradients take the other paths. */
export const IM2COL_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Whether {@link byTransposedIm2col} computes the filter gradient of the
 * convolution `info`: NHWC, stride 1, no dilation, output channels a
 * multiple of 4, and the transposed im2col within {@link IM2COL_MAX_BYTES}.
 */
export function transposedIm2colFits(info: tf.backend_util.Conv2DInfo): boolean {
  const taps = info.filterHeight * info.filterWidth * info.inChannels;
  const positions = info.batchSize * info.outHeight * info.outWidth;
  return (
    info.dataFormat === 'channelsLast' &&
    info.strideHeight === 1 &&
    info.strideWidth === 1 &&
    info.dilationHeight === 1 &&
    info.dilationWidth === 1 &&
    4 * taps * positions <= IM2COL_MAX_BYTES &&
    simdProductFits({ batch: 1, rows: taps, depth: positions, cols: info.outChannels })
  );
}

/**
 * The bytes of the transposed im2col and of `dy` that one part of
 * {@link byTransposedIm2col}'s product reads: what the two cores'
 * second-level caches hold (2 MiB each here), each thread multiplying its
 * rows of the part's im2col by all of the part's `dy`. Smaller parts cost
 * more hand-overs to the helper thread than they save (the CNN's gradient
 * below: 3.3 ms in parts of 512 KiB, 2.4-2.5 in parts of 3 to 6 MiB).
 */
export const PART_BYTES = 4 * 1024 * 1024;

/** The product's tiles start from the gradient's sums so far (the parts' products add up in the order of one product). */
const ACCUMULATED_PRODUCT: ProductVariant = { ...PLAIN_PRODUCT, accumulate: true };

/**
 * The filter gradient of a stride-1 NHWC convolution as a matrix product,
 * `dW[taps, outChannels] = cols[taps, positions] · dy[positions, outChannels]`,
 * where `cols` is the transposed im2col of `x` (transposed_im2col_simd.ts)
 * and the product is the SIMD routine of batch_mat_mul_simd.ts on two
 * threads (it reads `dy` as it is, where XNNPACK's product would pack it
 * anew), for convolutions that fit ({@link transposedIm2colFits}). The
 * positions are taken a few images at a time ({@link PART_BYTES}): each
 * part's im2col is written, then multiplied into the sums so far, which
 * adds each element's terms in the order one product over all positions
 * would, so the gradient is the same bit for bit, while the part's im2col
 * and `dy` stay in the cache for all the tiles that read them (the CNN's
 * [64, 14, 14, 16] input and 32 output channels, 2 threads: 2.41-2.45 ms
 * in parts of 30 images, against 2.81-2.87 as one product over its 7.2 MB
 * im2col). Returns undefined without computing where the routines cannot
 * run.
 */
function byTransposedIm2col(k: KernelCallScope, wasm: BackendWasm, x: tf.TensorInfo, dy: tf.TensorInfo, info: tf.backend_util.Conv2DInfo): tf.TensorInfo | undefined {
  const { batchSize, filterHeight, filterWidth, inChannels, outChannels, inHeight, inWidth, outHeight, outWidth, padInfo } = info;
  const taps = filterHeight * filterWidth * inChannels;
  const imagePositions = outHeight * outWidth;
  const partImages = Math.min(batchSize, Math.max(1, Math.floor(PART_BYTES / (4 * imagePositions * (taps + outChannels)))));
  const memory = wasmMemory(wasm);
  const address = (t: tf.TensorInfo) => wasm.typedArrayFromHeap(t).byteOffset;
  const xt = k.transpose(x, [3, 0, 1, 2]);
  const cols = wasm.makeOutput([taps, partImages * imagePositions], 'float32');
  const out = wasm.makeOutput([filterHeight, filterWidth, inChannels, outChannels], 'float32');
  let done = false;
  try {
    wasm.typedArrayFromHeap(out).fill(0);
    for (let first = 0; first < batchSize; first += partImages) {
      const images = Math.min(partImages, batchSize - first);
      const shape = {
        batch: images,
        planeImages: batchSize,
        inChannels,
        inHeight,
        inWidth,
        outHeight,
        outWidth,
        filterHeight,
        filterWidth,
        top: padInfo.top,
        left: padInfo.left,
      };
      if (!transposedIm2colSimd(memory, address(xt) + 4 * first * inHeight * inWidth, address(cols), shape)) return undefined;
      const part = {
        a: address(cols),
        b: address(dy) + 4 * first * imagePositions * outChannels,
        c: address(out),
        rows: taps,
        depth: images * imagePositions,
        cols: outChannels,
      };
      if (!matMulSimdOnThreads(memory, { ...part, variant: ACCUMULATED_PRODUCT })) return undefined;
    }
    done = true;
    return out;
  } finally {
    wasm.disposeData(cols.dataId);
    if (!done) wasm.disposeData(out.dataId);
  }
}

/**
 * The filter gradient of a stride-1 convolution as one XNNPACK convolution
 * whose filter is `x` rather than `dy`: with the taps flipped
 * (`i' = filterHeight - 1 - i`),
 * `dW[i, j, ci, co] = Σ_b,u,v dyP[co, u + i', v + j', b] · x[u, v, b, ci]`,
 * where `dyP` is `dy` as `[outChannels, outHeight, outWidth, batch]` with
 * `filterHeight - 1 - top` rows before it (and as many as make it
 * `inHeight + filterHeight - 1` rows; columns alike), a valid convolution of
 * `dyP` with `x` as an `[inHeight, inWidth, batch, inChannels]` filter. The
 * filter is packed anew at every call, so packing `x` rather than `dy`
 * pays when `x` is the smaller (a second layer with more output channels:
 * 3.75 against 4.35 ms for a [64, 14, 14, 16] input and 32 output
 * channels). The `[outChannels, filterHeight, filterWidth, inChannels]`
 * result is flipped and reordered into the gradient's layout by a loop over
 * its few elements.
 */
function inputAsFilter(k: KernelCallScope, wasm: BackendWasm, x: tf.TensorInfo, dy: tf.TensorInfo, info: tf.backend_util.Conv2DInfo): tf.TensorInfo {
  const channelsLast = info.dataFormat === 'channelsLast';
  const { filterHeight, filterWidth, inChannels, outChannels, inHeight, inWidth, outHeight, outWidth, padInfo } = info;
  const filter = k.transpose(x, channelsLast ? [1, 2, 0, 3] : [2, 3, 0, 1]);
  const images = k.transpose(dy, channelsLast ? [3, 1, 2, 0] : [1, 2, 3, 0]);
  const fitted = fitToPadding(
    k,
    images,
    padToExtent(outHeight, filterHeight - 1 - padInfo.top, inHeight + filterHeight - 1),
    padToExtent(outWidth, filterWidth - 1 - padInfo.left, inWidth + filterWidth - 1),
  );
  const flipped = k.call(tf.Conv2D, { x: fitted.x, filter }, { strides: [1, 1], dilations: [1, 1], pad: fitted.pad, dataFormat: 'NHWC' });
  const out = wasm.makeOutput([filterHeight, filterWidth, inChannels, outChannels], 'float32');
  const to = wasm.typedArrayFromHeap(out);
  const source = wasm.typedArrayFromHeap(flipped);
  let at = 0;
  for (let i = 0; i < filterHeight; i++) {
    for (let j = 0; j < filterWidth; j++) {
      for (let ci = 0; ci < inChannels; ci++) {
        for (let co = 0; co < outChannels; co++) {
          to[at++] = source[((co * filterHeight + filterHeight - 1 - i) * filterWidth + filterWidth - 1 - j) * inChannels + ci]!;
        }
      }
    }
  }
  return out;
}

function conv2DBackpropFilter({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { x, dy } = inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
  const { strides, pad, dataFormat, dimRoundingMode, filterShape } = attrs as unknown as tf.Conv2DBackpropFilterAttrs;
  const info = tf.backend_util.computeConv2DInfo(
    x.shape as [number, number, number, number],
    filterShape,
    strides,
    1,
    pad,
    dimRoundingMode,
    false,
    tf.backend_util.convertConv2DDataFormat(dataFormat),
  );
  const channelsLast = info.dataFormat === 'channelsLast';
  if (channelsLast) {
    const wasm = backend as BackendWasm;
    const out = wasm.makeOutput(filterShape, 'float32');
    const dw = wasm.typedArrayFromHeap(out);
    dw.fill(0);
    if (conv2dBackpropFilterSimd(wasmMemory(wasm), info, wasm.typedArrayFromHeap(x).byteOffset, wasm.typedArrayFromHeap(dy).byteOffset, dw.byteOffset)) return out;
    wasm.disposeData(out.dataId);
  }
  const strideOne = info.strideHeight === 1 && info.strideWidth === 1;
  return KernelCallScope.run(BACKEND, backend as tf.KernelBackend, (k) => {
    if (transposedIm2colFits(info)) {
      const gradient = byTransposedIm2col(k, backend as BackendWasm, x, dy, info);
      if (gradient !== undefined) return gradient;
    }
    if (strideOne && info.inHeight * info.inWidth * info.inChannels < info.outHeight * info.outWidth * info.outChannels) {
      return inputAsFilter(k, backend as BackendWasm, x, dy, info);
    }
    if (info.inChannels === 1) {
      return k.call(
        tf.DepthwiseConv2dNativeBackpropFilter,
        {
          x: channelsLast ? x : k.reshape(x, [info.batchSize, info.inHeight, info.inWidth, 1]),
          dy: channelsLast ? dy : k.transpose(dy, [0, 2, 3, 1]),
        },
        { strides, dilations: 1, pad: channelsLastPad(pad, channelsLast), filterShape, ...(dimRoundingMode ? { dimRoundingMode } : {}) },
      );
    }
    const images = k.transpose(x, channelsLast ? [3, 1, 2, 0] : [1, 2, 3, 0]);
    const filter = k.transpose(dy, channelsLast ? [1, 2, 0, 3] : [2, 3, 0, 1]);
    const { rows, cols } = filterGradientPadding(info);
    const fitted = fitToPadding(k, images, rows, cols);
    const gradient = k.call(
      tf.Conv2D,
      { x: fitted.x, filter },
      {
        strides: [info.dilationHeight, info.dilationWidth],
        dilations: [info.strideHeight, info.strideWidth],
        pad: fitted.pad,
        dataFormat: 'NHWC',
      },
    );
    return k.transpose(gradient, [1, 2, 0, 3]);
  });
}

/** The wasm kernel of `Conv2DBackpropFilter` (NHWC and NCHW, any stride and padding). */
export const conv2DBackpropFilterConfig: tf.KernelConfig = {
  kernelName: tf.Conv2DBackpropFilter,
  backendName: BACKEND,
  kernelFunc: conv2DBackpropFilter,
};
