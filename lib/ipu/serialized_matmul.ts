/**
 * The steps of a serialized matrix product (`ops.serializedMatMul`): the
 * product each step computes, as PopART splits a serialized `MatMul` into
 * `factor` products along one dimension.
 */
import type { SerializedMatMulAttrs } from '../backend/poptfjs_kernels/serialized_matmul_kernel.js';
import type { MatMulShape } from './matmul_plan.js';

/** The product one of the `factor` steps computes: `shape` with the dimension split divided by the factor. */
export function serializedStep(shape: MatMulShape, serialization: SerializedMatMulAttrs): MatMulShape {
  const { mode, factor } = serialization;
  if (mode === 'InputChannels') return { ...shape, rows: shape.rows / factor };
  if (mode === 'ReducingDim') return { ...shape, depth: shape.depth / factor };
  return { ...shape, columns: shape.columns / factor };
}
