/**
 * The kernel of `ops.serializedMatMul` (PopART's serialized `MatMul`): a
 * matrix product `[g × m × k] · [g × k × n]` the IPU computes as `factor`
 * smaller products one after another, split along one dimension. The numbers
 * are the product's; the split is what the cost model sees (lib/ipu/serialized_matmul.ts).
 *
 * Gradients are serialized products too, split along the same dimension, as
 * PopART serializes the gradients of a serialized product: the dimension
 * split in the forward product is the rows, the reduced dimension or the
 * columns of each gradient's product.
 */
import * as tf from '@tensorflow/tfjs';
import { callBackendKernel, type HostKernel } from './backend_kernel.js';

/** The kernel name of `ops.serializedMatMul`. */
export const SERIALIZED_MATMUL = 'poptfjs.SerializedMatMul';

/** Which dimension of `[m × k] · [k × n]` a serialized product splits (PopTorch's `MatMulSerializationMode`). */
export const MatMulSerializationMode = {
  /** Split the rows of the left operand (m): each step makes `m / factor` rows of the output. */
  InputChannels: 'InputChannels',
  /** Split the reduced dimension (k): each step adds a partial product into the output. */
  ReducingDim: 'ReducingDim',
  /** Split the columns of the right operand (n): each step makes `n / factor` columns of the output. */
  OutputChannels: 'OutputChannels',
  /** No split: an ordinary matrix product. */
  Disabled: 'Disabled',
} as const;
/** A member of {@link MatMulSerializationMode}. */
export type MatMulSerializationMode = (typeof MatMulSerializationMode)[keyof typeof MatMulSerializationMode];

/** The attributes of `poptfjs.SerializedMatMul`. */
export interface SerializedMatMulAttrs {
  /** The dimension split (never `Disabled`: that is a plain product). */
  readonly mode: Exclude<MatMulSerializationMode, 'Disabled'>;
  /** Steps the product is split into; divides the dimension split. */
  readonly factor: number;
  /** With float16 operands, partial products are added in float32 (PopTorch's `keep_precision`). */
  readonly keepPrecision: boolean;
}

/** The split of each gradient's product, by the forward product's: [of the left operand, of the right operand]. */
const GRADIENT_MODES: Readonly<Record<SerializedMatMulAttrs['mode'], readonly [SerializedMatMulAttrs['mode'], SerializedMatMulAttrs['mode']]>> = {
  // dA = dy·Bᵀ keeps the rows m; dB = Aᵀ·dy reduces over m.
  InputChannels: ['InputChannels', 'ReducingDim'],
  // dA = dy·Bᵀ has k as its columns; dB = Aᵀ·dy has k as its rows.
  ReducingDim: ['OutputChannels', 'InputChannels'],
  // dA = dy·Bᵀ reduces over n; dB = Aᵀ·dy keeps the columns n.
  OutputChannels: ['ReducingDim', 'OutputChannels'],
};

/** Runs `poptfjs.SerializedMatMul` on rank-3 operands of the same batch. */
export function runSerializedMatMul(a: tf.Tensor3D, b: tf.Tensor3D, attrs: SerializedMatMulAttrs): tf.Tensor3D {
  return tf.engine().runKernel(SERIALIZED_MATMUL, { a, b }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor3D;
}

function serializedMatMulKernel(backendName: string): tf.KernelFunc {
  return ({ inputs, backend }) =>
    callBackendKernel(backendName, tf.BatchMatMul, { a: inputs.a!, b: inputs.b! }, { transposeA: false, transposeB: false }, backend as tf.KernelBackend);
}

const serializedMatMulGradient: tf.GradConfig = {
  kernelName: SERIALIZED_MATMUL,
  inputsToSave: ['a', 'b'],
  gradFunc: (dy, saved, attrs) => {
    const [a, b] = saved as [tf.Tensor3D, tf.Tensor3D];
    const forward = attrs as unknown as SerializedMatMulAttrs;
    const [modeA, modeB] = GRADIENT_MODES[forward.mode];
    const grad = dy as tf.Tensor3D;
    return {
      a: () => runSerializedMatMul(grad, tf.transpose(b, [0, 2, 1]), { ...forward, mode: modeA }),
      b: () => runSerializedMatMul(tf.transpose(a, [0, 2, 1]), grad, { ...forward, mode: modeB }),
    };
  },
};

/** `ops.serializedMatMul`: a matrix product of rank-3 operands the IPU computes in serial steps (`attrs.mode`, `attrs.factor`). */
export const SERIALIZED_MATMUL_KERNEL: HostKernel = { kernelName: SERIALIZED_MATMUL, kernelFunc: serializedMatMulKernel, gradient: serializedMatMulGradient };
