/**
 * Shape rules of element-wise kernels of two or more tensors: the inputs
 * broadcast (numpy rules, `assertAndGetBroadcastShape`); the dtype is the
 * first input's unless the cpu backend gives another (comparisons bool,
 * `FloorDiv` int32, complex arithmetic complex64).
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelCall, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

/** Broadcasting kernels of `a` and `b` whose output has `a`'s dtype. */
const FIRST_INPUT_DTYPE = ['Atan2', 'BitwiseAnd', 'Maximum', 'Minimum', 'Mod', 'Pow', 'RealDiv', 'SquaredDifference'] as const;

/** Broadcasting kernels of `a` and `b` that also take complex64 tensors, giving complex64. */
const COMPLEX_ARITHMETIC = ['Add', 'Multiply', 'Sub'] as const;

/** Broadcasting comparisons and logical kernels of `a` and `b`: bool. */
const BOOL_OUTPUT = ['Equal', 'Greater', 'GreaterEqual', 'Less', 'LessEqual', 'LogicalAnd', 'LogicalOr', 'LogicalXor', 'NotEqual'] as const;

function broadcastShape(a: tf.TensorInfo, b: tf.TensorInfo): number[] {
  return tf.backend_util.assertAndGetBroadcastShape([...a.shape], [...b.shape]);
}

function broadcasting(dtypeOf: (a: tf.TensorInfo, b: tf.TensorInfo) => tf.DataType): KernelShapeRule {
  return (call: KernelCall) => {
    const a = call.input('a');
    const b = call.input('b');
    return output(broadcastShape(a, b), dtypeOf(a, b));
  };
}

/** The element-wise kernels of several tensors, by kernel name. */
export const ELEMENTWISE_BINARY_RULES: Readonly<Record<string, KernelShapeRule>> = {
  ...Object.fromEntries(FIRST_INPUT_DTYPE.map((name) => [name, broadcasting((a) => a.dtype)])),
  ...Object.fromEntries(COMPLEX_ARITHMETIC.map((name) => [name, broadcasting((a, b) => (a.dtype === 'complex64' || b.dtype === 'complex64' ? 'complex64' : a.dtype))])),
  ...Object.fromEntries(BOOL_OUTPUT.map((name) => [name, broadcasting(() => 'bool')])),
  FloorDiv: broadcasting(() => 'int32'),
  Prelu: (call) => output(broadcastShape(call.input('x'), call.input('alpha')), 'float32'),
  /** `condition ? t : e`: `t`'s shape (the op broadcasts the three first). */
  Select: (call) => {
    const t = call.input('t');
    return output(t.shape, tf.upcastType(t.dtype, call.input('e').dtype));
  },
  /** The sum of a list of tensors of one shape. */
  AddN: (call) => {
    const [first] = call.inputList();
    return output(first!.shape, first!.dtype);
  },
};
