/**
 * Shape rules of matrix products: `BatchMatMul`, `_FusedMatMul` (a product,
 * a broadcast bias and an activation) and `Einsum` (followed step by step
 * through tfjs's own einsum plan: `decodeEinsumEquation`,
 * `getEinsumComputePath`, `getEinsumPermutation`).
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelCall, type KernelShapeRule, type OutputSpec } from '../rules/kernel_shape_rule.js';

function broadcastShape(a: readonly number[], b: readonly number[]): number[] {
  return tf.backend_util.assertAndGetBroadcastShape([...a], [...b]);
}

/** The output of `a × b` (batch dimensions broadcast), checking that the inner dimensions agree. */
function matMulOutput(call: KernelCall): OutputSpec {
  const a = call.input('a');
  const b = call.input('b');
  const { transposeA, transposeB } = call.attrsAs<tf.BatchMatMulAttrs>();
  const aRank = a.shape.length;
  const bRank = b.shape.length;
  const innerA = transposeA ? a.shape[aRank - 2] : a.shape[aRank - 1];
  const innerB = transposeB ? b.shape[bRank - 1] : b.shape[bRank - 2];
  tf.util.assert(
    innerA === innerB,
    () =>
      `Error in matMul: inner shapes (${innerA}) and (${innerB}) of Tensors with shapes ${a.shape} and ${b.shape} and transposeA=${transposeA} and transposeB=${transposeB} must match.`,
  );
  const outerA = transposeA ? a.shape[aRank - 1]! : a.shape[aRank - 2]!;
  const outerB = transposeB ? b.shape[bRank - 2]! : b.shape[bRank - 1]!;
  return output([...broadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2)), outerA, outerB], a.dtype);
}

/** `_FusedMatMul`: the product, plus a bias and a prelu activation, which broadcast into it. */
const fusedMatMul: KernelShapeRule = (call) => {
  const product = matMulOutput(call);
  let shape = product.shape;
  const bias = call.optionalInput('bias');
  if (bias !== undefined) shape = broadcastShape(shape, bias.shape);
  const { activation } = call.attrsAs<tf._FusedMatMulAttrs>();
  if (activation !== 'prelu') return output(shape, product.dtype);
  return output(broadcastShape(shape, call.input('preluActivationWeights').shape), 'float32');
};

/** `Einsum`: the shapes of the cpu backend's plan of transposes, broadcast products and sums. */
const einsum: KernelShapeRule = (call) => {
  const tensors = call.inputList();
  const { equation } = call.attrsAs<tf.EinsumAttrs>();
  const { allDims, summedDims, idDims } = tf.backend_util.decodeEinsumEquation(equation, tensors.length);
  tf.backend_util.checkEinsumDimSizes(allDims.length, idDims, tensors as tf.Tensor[]);
  const { path, steps } = tf.backend_util.getEinsumComputePath(summedDims, idDims);
  let shape: number[] | undefined;
  let dtype: tf.DataType = tensors[0]!.dtype;
  let dimsRemaining = allDims.length;
  steps.forEach((terms, step) => {
    for (const term of terms) {
      const tensor = tensors[term]!;
      const { permutationIndices, expandDims } = tf.backend_util.getEinsumPermutation(dimsRemaining, idDims[term]!);
      const termShape = permutationIndices.map((axis) => tensor.shape[axis]!);
      for (const axis of expandDims) termShape.splice(axis, 0, 1);
      shape = shape === undefined ? termShape : broadcastShape(termShape, shape);
      dtype = tensor.dtype;
    }
    if (step < steps.length - 1) {
      if (path[step]! >= 0) {
        shape!.splice(path[step]! - (allDims.length - dimsRemaining), 1);
        dtype = tf.upcastType(dtype, 'int32');
      }
      dimsRemaining--;
    }
  });
  return output(shape!, dtype);
};

/** The matrix products, by kernel name. */
export const MATMUL_RULES: Readonly<Record<string, KernelShapeRule>> = {
  BatchMatMul: matMulOutput,
  _FusedMatMul: fusedMatMul,
  Einsum: einsum,
};
