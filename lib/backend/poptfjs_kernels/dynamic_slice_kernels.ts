/**
 * The kernels of `ops.dynamicSlice` and `ops.dynamicUpdate` (PopART's
 * `DynamicSlice` and `DynamicUpdate`): a slice of a fixed size along one
 * dimension, at an offset that is a tensor, read each time the kernel runs,
 * so one compiled graph serves every offset. An offset that puts the slice
 * outside the tensor is an error naming it and the offsets allowed.
 *
 * Gradients: the gradient of a slice is the incoming gradient written at the
 * same offset into zeros shaped like the input (spread out by the step); the
 * gradient of an update is the incoming gradient with the updated slice
 * zeroed (for the tensor updated) and the slice of it at the offset (for the
 * slice written in). The offset has no gradient (zeros).
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import { KernelCallScope } from '../wasm_kernels/kernel_call_scope.js';
import { registerForBackends } from './backend_kernel.js';
import { POPTFJS_KERNELS } from './kernel_names.js';
import { isTracingModel } from '../model_trace_state.js';

/** The attributes of `poptfjs.DynamicSlice`. */
export interface DynamicSliceAttrs {
  /** The dimension sliced (0 ≤ dim < rank). */
  readonly dim: number;
  /** Elements of the dimension the slice spans from its offset. */
  readonly size: number;
  /** Every `step`-th element of the span is taken. */
  readonly step: number;
}

/** The attributes of `poptfjs.DynamicUpdate`. */
export interface DynamicUpdateAttrs {
  /** The dimension updated (0 ≤ dim < rank). */
  readonly dim: number;
  /** Elements of the dimension the update spans from its offset. */
  readonly size: number;
}

/**
 * The offset a kernel reads from its `start` tensor, checked against the
 * dimension. While a model is traced the offset is an example, which may be
 * out of bounds (as PopTorch compiles with any): it is clamped into them.
 */
function checkedStart(op: string, backend: tf.KernelBackend, start: tf.TensorInfo, x: tf.TensorInfo, dim: number, size: number): number {
  const value = (backend.readSync(start.dataId) as Int32Array)[0]!;
  const length = x.shape[dim]!;
  if (!(value >= 0 && value + size <= length)) {
    if (isTracingModel()) return Math.min(Math.max(value, 0), length - size);
    throw new PoptfjsError(`${op}: start ${value} is out of bounds: a slice of ${size} along dimension ${dim} (of size ${length}) must start at 0 to ${length - size}`, {
      type: 'runtime',
      location: op,
    });
  }
  return value;
}

function dynamicSliceKernel(backendName: string): tf.KernelFunc {
  return ({ inputs, attrs, backend }) => {
    const { x, start } = inputs as { x: tf.TensorInfo; start: tf.TensorInfo };
    const { dim, size, step } = attrs as unknown as DynamicSliceAttrs;
    const kernelBackend = backend as tf.KernelBackend;
    const offset = checkedStart('dynamicSlice', kernelBackend, start, x, dim, size);
    const begin = x.shape.map((_, d) => (d === dim ? offset : 0));
    const end = x.shape.map((length, d) => (d === dim ? offset + size : length));
    const strides = x.shape.map((_, d) => (d === dim ? step : 1));
    const sliceAttrs = { begin, end, strides, beginMask: 0, endMask: 0, ellipsisMask: 0, newAxisMask: 0, shrinkAxisMask: 0 };
    return KernelCallScope.run(backendName, kernelBackend, (k) => k.call(tf.StridedSlice, { x }, sliceAttrs));
  };
}

function dynamicUpdateKernel(backendName: string): tf.KernelFunc {
  return ({ inputs, attrs, backend }) => {
    const { x, src, start } = inputs as { x: tf.TensorInfo; src: tf.TensorInfo; start: tf.TensorInfo };
    const { dim, size } = attrs as unknown as DynamicUpdateAttrs;
    const kernelBackend = backend as tf.KernelBackend;
    const offset = checkedStart('dynamicUpdate', kernelBackend, start, x, dim, size);
    const length = x.shape[dim]!;
    return KernelCallScope.run(backendName, kernelBackend, (k) => {
      const part = (from: number, to: number) =>
        k.call(tf.Slice, { x }, { begin: x.shape.map((_, d) => (d === dim ? from : 0)), size: x.shape.map((n, d) => (d === dim ? to - from : n)) });
      const parts = [...(offset > 0 ? [part(0, offset)] : []), src, ...(offset + size < length ? [part(offset + size, length)] : [])];
      return k.call(tf.Concat, parts, { axis: dim });
    });
  };
}

/** `dy` (a slice taken every `step` elements) spread back over the `size` elements it was taken from, zeros between. */
function spreadByStep(dy: tf.Tensor, dim: number, size: number, step: number): tf.Tensor {
  if (step === 1) return dy;
  const taken = dy.shape[dim]!;
  const padding = dy.shape.map((): [number, number] => [0, 0]);
  padding.splice(dim + 1, 0, [0, step - 1]);
  const spread = tf.pad(tf.expandDims(dy, dim + 1), padding);
  const flat = tf.reshape(
    spread,
    dy.shape.map((n, d) => (d === dim ? taken * step : n)),
  );
  return tf.slice(
    flat,
    dy.shape.map(() => 0),
    dy.shape.map((n, d) => (d === dim ? size : n)),
  );
}

/** Runs `poptfjs.DynamicSlice`. */
export function runDynamicSlice(x: tf.Tensor, start: tf.Tensor, attrs: DynamicSliceAttrs): tf.Tensor {
  return tf.engine().runKernel(POPTFJS_KERNELS.dynamicSlice, { x, start }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor;
}

/** Runs `poptfjs.DynamicUpdate`. */
export function runDynamicUpdate(x: tf.Tensor, src: tf.Tensor, start: tf.Tensor, attrs: DynamicUpdateAttrs): tf.Tensor {
  return tf.engine().runKernel(POPTFJS_KERNELS.dynamicUpdate, { x, src, start }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor;
}

const dynamicSliceGradient: tf.GradConfig = {
  kernelName: POPTFJS_KERNELS.dynamicSlice,
  inputsToSave: ['x', 'start'],
  gradFunc: (dy, saved, attrs) => {
    const [x, start] = saved as [tf.Tensor, tf.Tensor];
    const { dim, size, step } = attrs as unknown as DynamicSliceAttrs;
    return {
      x: () => runDynamicUpdate(tf.zerosLike(x), spreadByStep(dy as tf.Tensor, dim, size, step), start, { dim, size }),
      start: () => tf.zerosLike(start),
    };
  },
};

const dynamicUpdateGradient: tf.GradConfig = {
  kernelName: POPTFJS_KERNELS.dynamicUpdate,
  inputsToSave: ['src', 'start'],
  gradFunc: (dy, saved, attrs) => {
    const [src, start] = saved as [tf.Tensor, tf.Tensor];
    const { dim, size } = attrs as unknown as DynamicUpdateAttrs;
    const grad = dy as tf.Tensor;
    return {
      x: () => runDynamicUpdate(grad, tf.zerosLike(src), start, { dim, size }),
      src: () => runDynamicSlice(grad, start, { dim, size, step: 1 }),
      start: () => tf.zerosLike(start),
    };
  },
};

/** Registers the dynamic slice kernels for `backendNames`, and their gradients. */
export function registerDynamicSliceKernels(backendNames: readonly string[]): void {
  registerForBackends(POPTFJS_KERNELS.dynamicSlice, backendNames, dynamicSliceKernel);
  registerForBackends(POPTFJS_KERNELS.dynamicUpdate, backendNames, dynamicUpdateKernel);
  if (!tf.getGradient(POPTFJS_KERNELS.dynamicSlice)) tf.registerGradient(dynamicSliceGradient);
  if (!tf.getGradient(POPTFJS_KERNELS.dynamicUpdate)) tf.registerGradient(dynamicUpdateGradient);
}
