/**
 * Shape rules of complex numbers and Fourier transforms: element-wise, with
 * complex64 for complex results and float32 for their parts and magnitudes.
 */
import type * as tf from '@tensorflow/tfjs';
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

function sameShape(inputName: string, dtype: tf.DataType): KernelShapeRule {
  return (call) => output(call.input(inputName).shape, dtype);
}

/** The complex kernels, by kernel name. */
export const COMPLEX_RULES: Readonly<Record<string, KernelShapeRule>> = {
  /** A complex tensor of the real part's shape. */
  Complex: sameShape('real', 'complex64'),
  Real: sameShape('input', 'float32'),
  Imag: sameShape('input', 'float32'),
  ComplexAbs: sameShape('x', 'float32'),
  /** A transform over the innermost axis. */
  FFT: sameShape('input', 'complex64'),
  IFFT: sameShape('input', 'complex64'),
};
