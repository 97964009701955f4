/**
 * Shape rules of kernels that rearrange elements without computing new ones:
 * reshapes, transposes, tiling, padding, reversal, space/batch/depth moves,
 * diagonals (tfjs's `inferFromImplicitShape`, `getReshapedPermuted`,
 * `getSliceSize` where they apply).
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

/** A padding kernel (`PadV2`, `MirrorPad`): each axis grows by its before and after padding. */
const padding: KernelShapeRule = (call) => {
  const x = call.input('x');
  const { paddings } = call.attrsAs<tf.PadV2Attrs>();
  return output(
    paddings.map(([before, after], axis) => before + x.shape[axis]! + after),
    x.dtype,
  );
};

/** The rearranging kernels, by kernel name. */
export const RESHAPING_RULES: Readonly<Record<string, KernelShapeRule>> = {
  /** The new shape, one -1 inferred from the size; sizes must agree. */
  Reshape: (call) => {
    const x = call.input('x');
    const size = tf.util.sizeFromShape([...x.shape]);
    const shape = tf.util.inferFromImplicitShape([...call.attrsAs<tf.ReshapeAttrs>().shape], size);
    tf.util.assert(
      tf.util.sizeFromShape(shape) === size,
      () =>
        `The new shape (${shape}) has ${tf.util.sizeFromShape(shape)} elements and the old shape (${x.shape}) has ${size} elements. The new shape and old shape must have the same number of elements.`,
    );
    return output(shape, x.dtype);
  },
  /** A new axis of size 1 at `dim` (negative counts from the end of the output). */
  ExpandDims: (call) => {
    const input = call.input('input');
    const { dim } = call.attrsAs<tf.ExpandDimsAttrs>();
    const rank = input.shape.length;
    tf.util.assert(dim >= -(rank + 1) && dim <= rank, () => `Axis must be in the interval [${-(rank + 1)}, ${rank}]`);
    const shape = [...input.shape];
    shape.splice(dim < 0 ? rank + dim + 1 : dim, 0, 1);
    return output(shape, input.dtype);
  },
  Transpose: (call) => {
    const x = call.input('x');
    return output(
      call.attrsAs<tf.TransposeAttrs>().perm.map((axis) => x.shape[axis]!),
      x.dtype,
    );
  },
  Tile: (call) => {
    const x = call.input('x');
    const { reps } = call.attrsAs<tf.TileAttrs>();
    return output(
      x.shape.map((size, axis) => size * reps[axis]!),
      x.dtype,
    );
  },
  PadV2: padding,
  MirrorPad: padding,
  Reverse: (call) => {
    const x = call.input('x');
    return output(x.shape, x.dtype);
  },
  BatchToSpaceND: (call) => {
    const x = call.input('x');
    const { blockShape, crops } = call.attrsAs<tf.BatchToSpaceNDAttrs>();
    const blocks = tf.util.sizeFromShape(blockShape);
    const uncropped = tf.backend_util.getReshapedPermuted([...x.shape], blockShape, blocks);
    const [, size] = tf.slice_util.parseSliceParams(
      { shape: uncropped } as tf.Tensor,
      tf.backend_util.getSliceBeginCoords(crops, blockShape.length),
      tf.backend_util.getSliceSize(uncropped, crops, blockShape.length),
    );
    return output(size, x.dtype);
  },
  SpaceToBatchND: (call) => {
    const x = call.input('x');
    const { blockShape, paddings } = call.attrsAs<tf.SpaceToBatchNDAttrs>();
    const padded = x.shape.map((size, axis) => {
      const [before, after] = axis >= 1 && axis <= blockShape.length ? paddings[axis - 1]! : [0, 0];
      return before! + size + after!;
    });
    return output(tf.backend_util.getReshapedPermuted(padded, blockShape, tf.util.sizeFromShape(blockShape), false), x.dtype);
  },
  /** Depth moved into blocks of the spatial axes, in either layout. */
  DepthToSpace: (call) => {
    const x = call.input('x');
    const { blockSize, dataFormat } = call.attrsAs<tf.DepthToSpaceAttrs>();
    const [batch, ...rest] = x.shape as [number, number, number, number];
    const [height, width, depth] = dataFormat === 'NHWC' ? rest : [rest[1]!, rest[2]!, rest[0]!];
    const spatial = [height * blockSize, width * blockSize];
    const outDepth = depth / (blockSize * blockSize);
    return output(dataFormat === 'NHWC' ? [batch, ...spatial, outDepth] : [batch, outDepth, ...spatial], x.dtype);
  },
  /** A diagonal tensor: x's shape twice. */
  Diag: (call) => {
    const x = call.input('x');
    return output([...x.shape, ...x.shape], x.dtype);
  },
  /** The broadcast of two shapes given as vectors: as long as the longer one. */
  BroadcastArgs: (call) => output([Math.max(tf.util.sizeFromShape([...call.input('s0').shape]), tf.util.sizeFromShape([...call.input('s1').shape]))], 'int32'),
};
