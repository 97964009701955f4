/**
 * Shape rules of element-wise kernels of one tensor: the output has the
 * input's shape; its dtype is the input's unless the cpu backend gives
 * another (`Exp` float32, tests bool, `Cast` its attribute).
 */
import type * as tf from '@tensorflow/tfjs';
import { output, type KernelCall, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

/** Kernels of input `x` whose output has `x`'s shape and dtype. */
const SAME_SHAPE_AND_DTYPE = [
  'Abs',
  'Acos',
  'Acosh',
  'Asin',
  'Asinh',
  'Atan',
  'Atanh',
  'Ceil',
  'ClipByValue',
  'Cos',
  'Cosh',
  'Elu',
  'Erf',
  'Expm1',
  'Floor',
  'Identity',
  'LeakyRelu',
  'Log',
  'Log1p',
  'Neg',
  'OnesLike',
  'Reciprocal',
  'Relu',
  'Relu6',
  'Round',
  'Rsqrt',
  'Selu',
  'Sigmoid',
  'Sign',
  'Sin',
  'Sinh',
  'Softplus',
  'Sqrt',
  'Square',
  'StaticRegexReplace',
  'Step',
  'Tan',
  'Tanh',
  'ZerosLike',
] as const;

/** Kernels of input `x` whose output has `x`'s shape and dtype bool. */
const SAME_SHAPE_BOOL = ['IsFinite', 'IsInf', 'IsNan', 'LogicalNot'] as const;

function sameShape(inputName: string, dtype?: tf.DataType): KernelShapeRule {
  return (call: KernelCall) => {
    const x = call.input(inputName);
    return output(x.shape, dtype ?? x.dtype);
  };
}

/** The element-wise kernels of one tensor, by kernel name. */
export const ELEMENTWISE_UNARY_RULES: Readonly<Record<string, KernelShapeRule>> = {
  ...Object.fromEntries(SAME_SHAPE_AND_DTYPE.map((name) => [name, sameShape('x')])),
  ...Object.fromEntries(SAME_SHAPE_BOOL.map((name) => [name, sameShape('x', 'bool')])),
  Exp: sameShape('x', 'float32'),
  Cast: (call) => output(call.input('x').shape, call.attrsAs<tf.CastAttrs>().dtype),
  StringToHashBucketFast: sameShape('input', 'int32'),
  /** The gradient of `Elu`: `dy` and the forward output `y` have one shape. */
  EluGrad: sameShape('y', 'float32'),
};
