/**
 * `serializedMatMul`: PopTorch's `serializedMatMul`, a matrix product split
 * into smaller products computed one after another, to save memory.
 */
import * as tf from '@tensorflow/tfjs';
import { MatMulSerializationMode, runSerializedMatMul } from '../lib/backend/poptfjs_kernels/serialized_matmul_kernel.js';
import { argumentError, checkTensor } from './arguments/dynamic_offset.js';

export { MatMulSerializationMode } from '../lib/backend/poptfjs_kernels/serialized_matmul_kernel.js';

const OP = 'serializedMatMul';
const MODES: readonly string[] = Object.values(MatMulSerializationMode);

/**
 * The matrix product `lhs · rhs` (as `tf.matMul`), which the IPU computes as
 * `factor` smaller products one after another, split along the dimension
 * `mode` names — for `lhs` `[m × k]` and `rhs` `[k × n]`: `InputChannels`
 * splits m, `ReducingDim` k (the partial products are added), `OutputChannels`
 * n — so each step brings in and holds only its share of the operands: the
 * temporary memory of the product drops by about the factor and its time is
 * that of the steps in turn. Its gradients are serialized the same way.
 * `Disabled` is an ordinary product (`tf.matMul`). `factor` must divide the
 * dimension split. `keepPrecision` adds the partial products of a float16
 * product in float32 (more temporary memory, slower additions), as in
 * PopTorch it applies to float16 products only. `lhs` has rank 2 or more (its
 * leading dimensions are a batch); `rhs` has rank 2, or `lhs`'s batch.
 */
export function serializedMatMul(lhs: tf.Tensor, rhs: tf.Tensor, mode: MatMulSerializationMode, factor = 0, keepPrecision = false): tf.Tensor {
  checkTensor(OP, 'lhs', lhs);
  checkTensor(OP, 'rhs', rhs);
  if (!MODES.includes(mode)) throw argumentError(OP, `mode must be one of MatMulSerializationMode's ${MODES.map((m) => `'${m}'`).join(', ')}, got ${JSON.stringify(mode)}`);
  if (typeof keepPrecision !== 'boolean') throw argumentError(OP, `keepPrecision must be a boolean, got ${typeof keepPrecision}`);
  if (!Number.isInteger(factor) || factor < 0) throw argumentError(OP, `factor must be a non-negative integer, got ${String(factor)}`);
  if (lhs.rank < 2 || rhs.rank < 2) throw argumentError(OP, `lhs and rhs must have rank 2 or more, got ranks ${lhs.rank} and ${rhs.rank}`);
  const batch = lhs.shape.slice(0, -2);
  const [m, k] = lhs.shape.slice(-2) as [number, number];
  const [rk, n] = rhs.shape.slice(-2) as [number, number];
  if (rk !== k) throw argumentError(OP, `the columns of lhs (${k}) must equal the rows of rhs (${rk}); shapes [${lhs.shape.join(', ')}] and [${rhs.shape.join(', ')}]`);
  if (rhs.rank > 2 && (rhs.rank !== lhs.rank || rhs.shape.slice(0, -2).some((d, i) => d !== batch[i]))) {
    throw argumentError(OP, `rhs must have rank 2 or the batch of lhs [${batch.join(', ')}], got shape [${rhs.shape.join(', ')}]`);
  }
  if (mode === MatMulSerializationMode.Disabled) return tf.matMul(lhs, rhs);
  const split = {
    InputChannels: ['input channels (the rows of lhs)', m],
    ReducingDim: ['reducing dimension', k],
    OutputChannels: ['output channels (the columns of rhs)', n],
  } as const;
  const [name, size] = split[mode];
  if (factor < 1 || size % factor !== 0) throw argumentError(OP, `the factor (${factor}) must divide the ${name}, ${size}, to split it into equal steps`);
  const groups = batch.reduce((p, d) => p * d, 1);
  // A right operand shared by the whole batch makes one product over the batch's rows.
  const shared = rhs.rank === 2;
  const a = tf.reshape(lhs, shared ? [1, groups * m, k] : [groups, m, k]) as tf.Tensor3D;
  const b = tf.reshape(rhs, shared ? [1, k, n] : [groups, k, n]) as tf.Tensor3D;
  const product = runSerializedMatMul(a, b, { mode, factor, keepPrecision });
  return tf.reshape(product, [...batch, m, n]);
}
