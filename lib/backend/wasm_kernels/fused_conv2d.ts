/**
 * `FusedConv2D` for the wasm backend: the backend's own (XNNPACK), or, for
 * a node the `MultiplyAddConvolution` pattern marked, one matrix product of
 * its windows and its filter with fused multiply-adds, or for a marked
 * 3 × 3 convolution at stride 1, Winograd's F(2 × 2, 3 × 3)
 * (winograd_convolution.ts).
 *
 * XNNPACK's convolutions run on 128-bit wasm SIMD, which has no fused
 * multiply-add: about 35 GFLOP/s a thread here, where onnxruntime's MLAS
 * fuses them. Relaxed SIMD's `f32x4.relaxed_madd` does (on by default from
 * Node 22; Node 20 needs `--experimental-wasm-relaxed-simd`): the product
 * routine of batch_mat_mul_simd.ts reaches about 51-55 GFLOP/s a thread on
 * SqueezeNet's shapes, as much as a loop of independent `relaxed_madd`s
 * alone (51-55 GFLOP/s a thread here: two 4-lane fused multiply-adds a
 * cycle). A marked node (attribute `multiplyAdd` `'fused'`) with NHWC data,
 * no dilation, a linear or relu activation, a bias of one value per output
 * channel or none, and output channels in fours is computed as the product
 * of
 * - its windows, read in place through a table of where each meets the
 *   input (a row of zeros for taps in the padding), or, for a 1 × 1 window
 *   at stride 1 without padding, the input itself,
 * - and the filter as `[taps · inChannels, outChannels]`, packed in panels
 *   of 8 columns once per filter tensor (packed_filter.ts), its tiles
 *   starting from the bias and ending with the relu, in panels of columns
 *   that stay in a core's cache,
 *
 * shared with the helper thread of simd_routine_threads.ts. Each sum is
 * rounded once per multiply-add instead of twice, so the results differ
 * from XNNPACK's in the last bits (the tolerance of onnxruntime's against
 * PyTorch's). Alone, on 2 threads, after an XNNPACK convolution: a 13 × 13
 * × 512 → 1000 1 × 1 convolution 2.0 against XNNPACK's 2.6 ms, SqueezeNet's
 * 3 × 3 ones of 28-56 MFLOP 0.34-0.65 against 0.43-0.81 ms; ResNet-18's at
 * 64 × 64 (4 to 1024 output positions) about even, 0.15-0.35 ms either way.
 *
 * A marked 3 × 3 convolution at stride 1 with input channels in fours and
 * 32 output positions or more takes F(2 × 2, 3 × 3) instead, whose 16 products do 16 multiply-adds per
 * 2 × 2 outputs where the product of windows does 36. SqueezeNet 1.1's
 * (55 × 55 × 16 → 64, 27 × 27 × 32 → 128, 13 × 13 × 48 → 192 and 13 × 13 ×
 * 64 → 256, relu, 2 threads): 0.44, 0.34, 0.18 and 0.35 ms against the
 * product of windows' 0.62, 0.54, 0.29 and 0.51.
 *
 * Other nodes, and marked ones where the engine refuses relaxed SIMD, run
 * the backend's own kernel. */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { KernelCallShapes } from '../kernel_call_shapes.js';
import { asksFusedMultiplyAdd, isColumnBias, MULTIPLY_ADD_ACTIVATIONS, type MultiplyAddActivation } from '../multiply_add_attribute.js';
import { OwnWasmKernel } from './own_wasm_kernel.js';
import { matMulSimdOnThreads, productRoutineReady, type ProductVariant, simdProductFits, windowRun } from './batch_mat_mul_simd.js';
import { type FilterCopyShape, packedFilter, packedFilterCopy } from './packed_filter.js';
import { wasmMemory } from './wasm_simd_routine.js';
import { type WinogradShape, winogradConvolution, winogradFilterCopy } from './winograd_convolution.js';

const BACKEND = 'wasm';

/** The wasm backend's own `FusedConv2D` (registered by the import above), which this kernel replaces and calls. */
const OWN_FUSED_CONV2D = new OwnWasmKernel(tf.FusedConv2D);

/** The bytes of the filter's columns a panel holds: a quarter of a core's 2 MiB second-level cache here, with room for the rows of the input. */
const PANEL_BYTES = 512 * 1024;

/** The columns of a panel of the filter `[depth, cols]`: all of them when they fit {@link PANEL_BYTES}, else a multiple of 8. */
export function panelColumns(depth: number, cols: number): number {
  if (4 * depth * cols <= PANEL_BYTES) return cols;
  return Math.max(8, Math.floor(PANEL_BYTES / (4 * depth) / 8) * 8);
}

/** The convolution of a marked node, when the product computes it: its windows and the product's variant. */
function multiplyAddConvolution(args: KernelCallShapes): { info: tf.backend_util.Conv2DInfo; variant: ProductVariant } | undefined {
  const { x, filter, bias, preluActivationWeights } = args.inputs;
  const attrs = args.attrs as unknown as tf.FusedConv2DAttrs & Record<string, unknown>;
  if (!asksFusedMultiplyAdd(attrs) || x === undefined || filter === undefined || preluActivationWeights !== undefined) return undefined;
  if (x.dtype !== 'float32' || filter.dtype !== 'float32' || attrs.dataFormat !== 'NHWC' || !MULTIPLY_ADD_ACTIVATIONS.has(attrs.activation ?? 'linear')) return undefined;
  const info = tf.backend_util.computeConv2DInfo(
    x.shape as [number, number, number, number],
    filter.shape as [number, number, number, number],
    attrs.strides,
    attrs.dilations,
    attrs.pad,
    attrs.dimRoundingMode,
    false,
    'channelsLast',
  );
  const outChannels = info.outChannels;
  if (!isColumnBias(bias, outChannels)) return undefined;
  const rows = info.batchSize * info.outHeight * info.outWidth;
  const depth = info.filterHeight * info.filterWidth * info.inChannels;
  const fits = info.dilationHeight === 1 && info.dilationWidth === 1 && simdProductFits({ batch: 1, rows, depth, cols: outChannels });
  if (!fits) return undefined;
  return {
    info,
    variant: {
      multiplyAdd: 'fused',
      bias: bias !== undefined,
      activation: (attrs.activation ?? 'linear') as MultiplyAddActivation,
      windows: !inputIsIm2col(info),
      packedB: true,
    },
  };
}

/** Whether the input of `info` already is its im2col: a 1 × 1 window at stride 1, no padding. */
function inputIsIm2col(info: tf.backend_util.Conv2DInfo): boolean {
  const { filterHeight, filterWidth, strideHeight, strideWidth, padInfo } = info;
  return (
    filterHeight === 1 &&
    filterWidth === 1 &&
    strideHeight === 1 &&
    strideWidth === 1 &&
    padInfo.top === 0 &&
    padInfo.left === 0 &&
    padInfo.bottom === 0 &&
    padInfo.right === 0
  );
}

/**
 * The convolution `info` as the product of its windows (its input itself
 * for a 1 × 1 window at stride 1 without padding) and its filter, packed
 * once per filter tensor, in a new tensor of `outShape` (by default the
 * convolution's NHWC output; any shape of as many elements); undefined
 * (nothing left allocated) where the routine cannot run.
 */
export function convolutionByProduct(
  wasm: BackendWasm,
  inputs: Record<string, tf.TensorInfo | undefined>,
  info: tf.backend_util.Conv2DInfo,
  variant: ProductVariant,
  outShape: readonly number[] = [info.batchSize, info.outHeight, info.outWidth, info.outChannels],
): tf.TensorInfo | undefined {
  const { x, filter, bias } = inputs as { x: tf.TensorInfo; filter: tf.TensorInfo; bias?: tf.TensorInfo };
  const memory = wasmMemory(wasm);
  if (!productRoutineReady(memory, variant)) return undefined;
  const address = (t: tf.TensorInfo) => wasm.typedArrayFromHeap(t).byteOffset;
  const rows = info.batchSize * info.outHeight * info.outWidth;
  const depth = info.filterHeight * info.filterWidth * info.inChannels;
  const windows = { ...info, batch: info.batchSize, top: info.padInfo.top, left: info.padInfo.left };
  const run = windowRun(windows);
  const packed = packedFilter(wasm, filter, depth, info.outChannels);
  const zero = variant.windows ? wasm.makeOutput([run * info.inChannels], 'float32') : undefined;
  const table = variant.windows ? wasm.makeOutput([rows, (info.filterHeight * info.filterWidth) / run], 'int32') : undefined;
  const out = wasm.makeOutput([...outShape], 'float32');
  let done = false;
  try {
    if (zero !== undefined) (wasm.typedArrayFromHeap(zero) as Float32Array).fill(0);
    done = matMulSimdOnThreads(memory, {
      a: address(table ?? x),
      b: address(packed),
      c: address(out),
      rows,
      depth,
      cols: info.outChannels,
      variant,
      panel: panelColumns(depth, info.outChannels),
      ...(bias !== undefined ? { bias: address(bias) } : {}),
      ...(zero !== undefined ? { windows: { x: address(x), zero: address(zero), shape: windows } } : {}),
    });
    return done ? out : undefined;
  } finally {
    if (zero !== undefined) wasm.disposeData(zero.dataId);
    if (table !== undefined) wasm.disposeData(table.dataId);
    if (!done) wasm.disposeData(out.dataId);
  }
}

/**
 * The fewest output positions (batch × height × width) of a convolution
 * F(2 × 2, 3 × 3) computes. Per pair of input and output channels, each
 * tile (2 × 2 outputs) saves 20 of the product of windows' 36
 * multiply-adds, while the transformed filter reads 64 bytes to the
 * filter's 36, once a call: at 2 threads' 45 G multiply-adds a second and
 * the 12 GB/s a filter is read at from memory, the two are even at about 5
 * tiles (21 output positions), at 2.6 tiles from the cache (24 GB/s). Measured, on 2
 * threads, relu (F(2 × 2, 3 × 3) against the product of windows, from the
 * cache): 2 × 2 × 512 → 512 0.34 against 0.25 ms, 2 × 4 × 512 → 512 0.67
 * against 0.45, 2 × 6 × 256 → 256 0.22 against 0.15, 3 × 3 × 256 → 256 0.13
 * against 0.14, 4 × 4 × 256 → 256 0.14 against 0.21; ResNet-18's session
 * at 64 × 64, after an onnxruntime run each (its weights read from
 * memory): 6.25-6.30 ms with F(2 × 2, 3 × 3) from 64 output positions on,
 * 6.39-6.70 from 16 (its 4 × 4 ones by it too); in turn with itself, from
 * the cache, 4.45-4.49 against 4.56.
 */
export const MIN_WINOGRAD_OUTPUTS = 32;

/** The shape of `info` for {@link winogradConvolution} where it computes it (3 × 3, stride 1, channels in fours, {@link MIN_WINOGRAD_OUTPUTS} output positions or more), else undefined. */
function winogradShape(info: tf.backend_util.Conv2DInfo): WinogradShape | undefined {
  const { filterHeight, filterWidth, strideHeight, strideWidth, inChannels, outChannels } = info;
  const applies =
    filterHeight === 3 &&
    filterWidth === 3 &&
    strideHeight === 1 &&
    strideWidth === 1 &&
    inChannels % 4 === 0 &&
    outChannels % 4 === 0 &&
    info.batchSize * info.outHeight * info.outWidth >= MIN_WINOGRAD_OUTPUTS;
  return applies ? { ...info, batch: info.batchSize, top: info.padInfo.top, left: info.padInfo.left } : undefined;
}

/** Whether the routines compute the marked `FusedConv2D` call `args` (where the engine has relaxed SIMD). */
export function computesMarkedConvolution(args: KernelCallShapes): boolean {
  return multiplyAddConvolution(args) !== undefined;
}

/** The shape of the `FusedConv2D` call `args` where, marked, it runs by F(2 × 2, 3 × 3) (when the engine has relaxed SIMD), else undefined. */
export function markedWinogradShape(args: KernelCallShapes): WinogradShape | undefined {
  const convolution = multiplyAddConvolution(args);
  return convolution && winogradShape(convolution.info);
}

/** The copy of its filter that the `FusedConv2D` call `args`, marked, makes and keeps while the filter lives; undefined where it runs the backend's own kernel. */
export function markedFilterCopy(args: KernelCallShapes): FilterCopyShape | undefined {
  const convolution = multiplyAddConvolution(args);
  if (convolution === undefined) return undefined;
  const { filterHeight, filterWidth, inChannels, outChannels } = convolution.info;
  return winogradShape(convolution.info) ? winogradFilterCopy(inChannels, outChannels) : packedFilterCopy(filterHeight * filterWidth * inChannels, outChannels);
}

/** The convolution of a marked node: by F(2 × 2, 3 × 3) where it applies, else as one product; undefined where the routines cannot run. */
function marked(wasm: BackendWasm, inputs: Record<string, tf.TensorInfo | undefined>, info: tf.backend_util.Conv2DInfo, variant: ProductVariant): tf.TensorInfo | undefined {
  const shape = winogradShape(info);
  return shape ? winogradConvolution(wasm, inputs.x!, inputs.filter!, inputs.bias, shape, variant) : convolutionByProduct(wasm, inputs, info, variant);
}

function fusedConv2D(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const convolution = multiplyAddConvolution(args);
  const out = convolution && marked(args.backend as BackendWasm, args.inputs as Record<string, tf.TensorInfo | undefined>, convolution.info, convolution.variant);
  return out ?? OWN_FUSED_CONV2D.get().kernelFunc(args);
}

/** The wasm kernel of `FusedConv2D`: fused multiply-adds for marked nodes where the engine has relaxed SIMD, the backend's own otherwise. */
export const fusedConv2DConfig: tf.KernelConfig = {
  kernelName: tf.FusedConv2D,
  backendName: BACKEND,
  kernelFunc: fusedConv2D,
  setupFunc: (backend) => OWN_FUSED_CONV2D.setup(backend),
};
