/**
 * Test helpers for kernels: the wasm backend with the training kernels, the
 * cpu backend's kernel as the reference, and a relative comparison.
 */
import * as tf from '@tensorflow/tfjs';
import { expect } from 'vitest';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { registerWasmTrainingKernels } from '../../../lib/backend/wasm_kernels/index.js';
import { computeOnWasmThreads, switchableWasmThreads, wasmComputeThreads } from '../../../lib/backend/wasm_thread_pool.js';

/** A kernel result as plain data. */
export interface KernelResult {
  /** The values, row-major. */
  readonly values: tf.TypedArray;
  /** The shape. */
  readonly shape: number[];
  /** The dtype. */
  readonly dtype: tf.DataType;
}

/** Makes wasm the active backend, with the training kernels registered. */
export async function useWasmTrainingBackend(): Promise<void> {
  await initBackend('wasm');
  registerWasmTrainingKernels();
}

/**
 * `run` on one thread, then with the wasm pool left to poptfjs's routines
 * (their helper thread computes a share), the threads of before put back
 * after: results that must agree bit for bit. Needs a switchable pool.
 */
export function onOneThreadAndWithHelper<T>(run: () => T): [T, T] {
  const before = wasmComputeThreads()!;
  try {
    computeOnWasmThreads(1);
    const one = run();
    computeOnWasmThreads(switchableWasmThreads()!, true);
    return [one, run()];
  } finally {
    computeOnWasmThreads(before);
  }
}

/** Runs `kernelName` through the engine on the active backend. */
export function runKernel(kernelName: string, inputs: Record<string, tf.Tensor>, attrs: object): tf.Tensor {
  return tf.engine().runKernel(kernelName, inputs as tf.NamedTensorMap, attrs as tf.NamedAttrMap) as tf.Tensor;
}

/** Runs the cpu backend's kernel `kernelName` on copies of `inputs` (tensors of any backend, named or a list). */
export function runCpuKernel(kernelName: string, inputs: Record<string, tf.Tensor> | tf.Tensor[], attrs: object): KernelResult {
  const cpu = tf.engine().findBackend('cpu');
  const toCpu = (t: tf.Tensor): tf.TensorInfo => ({ dataId: cpu.write(t.dataSync(), t.shape, t.dtype), shape: t.shape, dtype: t.dtype });
  const cpuInputs = Array.isArray(inputs) ? inputs.map(toCpu) : Object.fromEntries(Object.entries(inputs).map(([name, t]) => [name, toCpu(t)]));
  const kernel = tf.getKernel(kernelName, 'cpu')!;
  const out = kernel.kernelFunc({ inputs: cpuInputs as tf.NamedTensorInfoMap, attrs: attrs as tf.NamedAttrMap, backend: cpu }) as tf.TensorInfo;
  const result = { values: (cpu.readSync(out.dataId) as tf.TypedArray).slice(), shape: out.shape, dtype: out.dtype };
  cpu.disposeData(out.dataId);
  for (const info of Object.values(cpuInputs)) cpu.disposeData(info.dataId);
  return result;
}

/** Asserts equal shapes and `|actual - expected| <= rtol · max|expected|` everywhere. */
export function expectRelativelyClose(actual: tf.Tensor, expected: KernelResult, rtol = 1e-4): void {
  expect(actual.shape).toEqual(expected.shape);
  const a = actual.dataSync();
  let scale = 1e-30;
  for (const v of expected.values) scale = Math.max(scale, Math.abs(v));
  let worst = 0;
  let at = 0;
  for (let i = 0; i < a.length; i++) {
    const error = Math.abs(a[i]! - expected.values[i]!);
    if (!(error <= worst)) {
      worst = error;
      at = i;
    }
  }
  expect(worst / scale, `element ${at}: ${a[at]} vs expected ${expected.values[at]}`).toBeLessThanOrEqual(rtol);
}

/** A convolution's padding, as tf.conv2d takes it. */
export type ConvolutionPad = 'same' | 'valid' | number | tf.backend_util.ExplicitPadding;

/** An NHWC shape as NCHW. */
export const toNCHW = ([n, h, w, c]: number[]) => [n, c, h, w] as [number, number, number, number];

/** An NHWC convolution's padding for the same convolution in `dataFormat` (explicit paddings list the axes in order). */
export function padFor(pad: ConvolutionPad, dataFormat: 'NHWC' | 'NCHW'): ConvolutionPad {
  if (!Array.isArray(pad) || dataFormat === 'NHWC') return pad;
  return [pad[0], pad[3], pad[1], pad[2]];
}

/** A 2-D convolution's shapes (NHWC input, HWIO filter) and geometry, as the gradient kernels' tests run it. */
export interface ConvolutionCase {
  x: [number, number, number, number];
  filter: [number, number, number, number];
  strides: number | [number, number];
  pad: ConvolutionPad;
  dimRoundingMode?: 'floor' | 'round' | 'ceil';
}

/** The convolutions both gradients of a 2-D convolution are tested on: strides, each padding, rounding, 1×1 and 5×5 filters. */
export const CONVOLUTION_CASES: readonly ConvolutionCase[] = [
  { x: [2, 7, 7, 3], filter: [3, 3, 3, 4], strides: 1, pad: 'same' },
  { x: [2, 7, 7, 3], filter: [3, 3, 3, 4], strides: 2, pad: 'same' },
  { x: [2, 8, 8, 3], filter: [3, 3, 3, 4], strides: 2, pad: 'valid' },
  { x: [1, 9, 8, 2], filter: [2, 3, 2, 5], strides: [2, 3], pad: 'same' },
  { x: [3, 6, 6, 1], filter: [5, 5, 1, 8], strides: 1, pad: 'valid' },
  { x: [2, 5, 6, 4], filter: [1, 1, 4, 2], strides: 2, pad: 'valid' },
  { x: [2, 8, 8, 2], filter: [3, 3, 2, 3], strides: 2, pad: 1, dimRoundingMode: 'ceil' },
  { x: [2, 8, 8, 2], filter: [3, 3, 2, 3], strides: 2, pad: 1, dimRoundingMode: 'floor' },
  {
    x: [2, 8, 9, 3],
    filter: [3, 3, 3, 4],
    strides: 2,
    pad: [
      [0, 0],
      [2, 0],
      [1, 3],
      [0, 0],
    ],
  },
  {
    x: [1, 4, 4, 2],
    filter: [3, 3, 2, 2],
    strides: 1,
    pad: [
      [0, 0],
      [4, 1],
      [0, 5],
      [0, 0],
    ],
  },
];

/** A tensor of standard normal values, the same for the same seed. */
export function randomTensor(shape: number[], seed: number): tf.Tensor {
  return tf.randomNormal(shape, 0, 1, 'float32', seed);
}

/** The output shape of a forward 2-D (or depthwise) convolution. */
export function convOutShape(
  xShape: number[],
  filterShape: number[],
  attrs: {
    strides: number | [number, number];
    pad: unknown;
    dilations?: number | [number, number];
    dimRoundingMode?: 'floor' | 'round' | 'ceil';
    dataFormat?: 'NHWC' | 'NCHW';
  },
  depthwise: boolean,
): number[] {
  return tf.backend_util.computeConv2DInfo(
    xShape as [number, number, number, number],
    filterShape as [number, number, number, number],
    attrs.strides,
    attrs.dilations ?? 1,
    attrs.pad as 'same',
    attrs.dimRoundingMode,
    depthwise,
    attrs.dataFormat === 'NCHW' ? 'channelsFirst' : 'channelsLast',
  ).outShape;
}

/**
 * `filter` (`[height, width, ...]`) with `dilation - 1` zero taps between
 * its taps: undilated, it computes what `filter` computes dilated.
 */
export function denseFilter(filter: tf.Tensor, [dh, dw]: [number, number]): tf.Tensor {
  const [fh, fw, c, m] = filter.shape as [number, number, number, number];
  const shape = [(fh - 1) * dh + 1, (fw - 1) * dw + 1, c, m];
  const values = new Float32Array(shape.reduce((a, b) => a * b));
  const src = filter.dataSync();
  for (let i = 0; i < fh; i++) {
    for (let j = 0; j < fw; j++) {
      values.set(src.subarray((i * fw + j) * c * m, (i * fw + j + 1) * c * m), (i * dh * shape[1]! + j * dw) * c * m);
    }
  }
  return tf.tensor(values, shape);
}
