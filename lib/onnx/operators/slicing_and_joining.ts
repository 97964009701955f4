/**
 * Cutting tensors into parts and putting them together: Slice, Split, Concat
 * and Pad. Starts, ends, split sizes and pads given as inputs must be known at
 * import.
 */
import * as tf from '@tensorflow/tfjs';
import { hostNumbers } from '../proto/host_tensor.js';
import { OnnxError } from '../proto/onnx_errors.js';
import { allAxes, normalizeAxes, normalizeAxis } from './axes.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

interface SliceSpec {
  starts: number[];
  ends: number[];
  axes: number[];
  steps: number[];
}

function sliceSpec(call: OperatorCall): SliceSpec {
  if (call.opset < 10) {
    const starts = call.attrs.ints('starts', []);
    return {
      starts,
      ends: call.attrs.ints('ends', []),
      axes: call.attrs.ints('axes') ?? allAxes(starts.length),
      steps: starts.map(() => 1),
    };
  }
  const starts = hostNumbers(call.constantInput(1));
  const ends = hostNumbers(call.constantInput(2));
  const axes = call.optionalConstantInput(3);
  const steps = call.optionalConstantInput(4);
  return {
    starts,
    ends,
    axes: axes ? hostNumbers(axes) : allAxes(starts.length),
    steps: steps ? hostNumbers(steps) : starts.map(() => 1),
  };
}

const slice: OperatorImplementation = (call) => {
  const x = call.input(0);
  const spec = sliceSpec(call);
  const begin = x.shape.map(() => 0);
  const end = [...x.shape];
  const strides = x.shape.map(() => 1);
  let endMask = 0;
  normalizeAxes(spec.axes, x.rank, call.where).forEach((axis, i) => {
    const dim = x.shape[axis]!;
    const step = spec.steps[i]!;
    if (step === 0) throw new OnnxError(`${call.where}: slice step 0 on axis ${axis}`, { location: call.where });
    const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), hi);
    const rawStart = spec.starts[i]! < 0 ? spec.starts[i]! + dim : spec.starts[i]!;
    const rawEnd = spec.ends[i]! < 0 ? spec.ends[i]! + dim : spec.ends[i]!;
    begin[axis] = step > 0 ? clamp(rawStart, 0, dim) : clamp(rawStart, 0, dim - 1);
    end[axis] = step > 0 ? clamp(rawEnd, 0, dim) : clamp(rawEnd, -1, dim - 1);
    strides[axis] = step;
    if (step < 0 && end[axis] === -1) endMask |= 1 << axis;
  });
  if (strides.every((s) => s === 1)) {
    const size = end.map((e, i) => Math.max(e - begin[i]!, 0));
    if (size.every((s, i) => s === x.shape[i])) return [x];
    return [tf.slice(x, begin, size)];
  }
  return [tf.stridedSlice(x, begin, end, strides, 0, endMask)];
};

function splitSizes(call: OperatorCall, dim: number): number[] {
  const given = call.opset < 13 ? (call.attrs.ints('split') ?? (call.hasInput(1) ? hostNumbers(call.constantInput(1)) : undefined)) : call.optionalConstantInput(1);
  if (given !== undefined) return Array.isArray(given) ? given : hostNumbers(given);
  const parts = call.outputCount;
  if (dim % parts !== 0) throw new OnnxError(`${call.where}: cannot split size ${dim} into ${parts} equal parts`, { location: call.where });
  return new Array<number>(parts).fill(dim / parts);
}

const split: OperatorImplementation = (call) => {
  const x = call.input(0);
  const axis = normalizeAxis(call.attrs.int('axis', 0), x.rank, call.where);
  const sizes = splitSizes(call, x.shape[axis]!);
  if (sizes.reduce((a, b) => a + b, 0) !== x.shape[axis]) {
    throw new OnnxError(`${call.where}: split sizes [${sizes.join(', ')}] do not add up to ${x.shape[axis]}`, { location: call.where });
  }
  if (sizes.length === 1) return [x];
  return tf.split(x, sizes, axis);
};

const concat: OperatorImplementation = (call) => {
  const inputs = Array.from({ length: call.inputCount }, (_, i) => call.input(i));
  const axis = normalizeAxis(call.attrs.int('axis', 1), inputs[0]!.rank, call.where);
  const parts = inputs.filter((t) => t.size > 0);
  if (parts.length === 1 && inputs.length > 1) return [parts[0]!];
  if (inputs.length === 1) return [inputs[0]!];
  return [tf.concat(parts.length > 0 ? parts : inputs, axis)];
};

interface PadSpec {
  pads: number[];
  mode: string;
  value: number;
}

function padSpec(call: OperatorCall): PadSpec {
  const mode = call.attrs.string('mode', 'constant');
  if (call.opset < 11) return { pads: call.attrs.ints('pads') ?? call.attrs.ints('paddings', []), mode, value: call.attrs.float('value', 0) };
  const value = call.optionalConstantInput(2);
  return { pads: hostNumbers(call.constantInput(1)), mode, value: value ? (hostNumbers(value)[0] ?? 0) : 0 };
}

/** Pads `x` along `axis` by repeating its edge values (`edge`) or reflecting it (`reflect`), by gathering. */
function gatherPad(x: tf.Tensor, axis: number, before: number, after: number, mode: string): tf.Tensor {
  const dim = x.shape[axis]!;
  const index = (i: number) => {
    if (mode === 'edge') return Math.min(Math.max(i, 0), dim - 1);
    const period = 2 * (dim - 1);
    if (period === 0) return 0;
    const m = ((i % period) + period) % period;
    return m < dim ? m : period - m;
  };
  const indices = Array.from({ length: dim + before + after }, (_, i) => index(i - before));
  return tf.gather(x, tf.tensor1d(indices, 'int32'), axis);
}

const pad: OperatorImplementation = (call) => {
  let x = call.input(0);
  const { pads, mode, value } = padSpec(call);
  const rank = x.rank;
  if (pads.length !== 2 * rank) throw new OnnxError(`${call.where}: ${pads.length} pads for a tensor of rank ${rank}`, { location: call.where });
  const before = pads.slice(0, rank);
  const after = pads.slice(rank);
  if (before.some((p) => p < 0) || after.some((p) => p < 0)) {
    const begin = before.map((p) => Math.max(-p, 0));
    const size = x.shape.map((d, i) => d - begin[i]! - Math.max(-after[i]!, 0));
    x = tf.slice(x, begin, size);
  }
  const grow = x.shape.map((_, i) => [Math.max(before[i]!, 0), Math.max(after[i]!, 0)] as [number, number]);
  if (grow.every(([b, a]) => b === 0 && a === 0)) return [x];
  if (mode === 'constant') return [tf.pad(x, grow, value)];
  if (mode !== 'edge' && mode !== 'reflect') throw new OnnxError(`${call.where}: pad mode '${mode}' is not supported`, { location: call.where });
  grow.forEach(([b, a], axis) => {
    if (b > 0 || a > 0) x = gatherPad(x, axis, b, a, mode);
  });
  return [x];
};

/** Slicing and joining operators. */
export const SLICING_AND_JOINING_OPERATORS: OperatorFamily = {
  Slice: [{ since: 1, run: slice }],
  Split: [{ since: 1, run: split }],
  Concat: [{ since: 1, run: concat }],
  Pad: [{ since: 2, run: pad }],
};
