/**
 * Shape rules of pooling and its gradients, computed with tfjs's
 * `computePool2DInfo` and `computePool3DInfo` as the cpu backend does
 * (gradients have the forward input's shape).
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

type Shape4D = [number, number, number, number];
type Shape5D = [number, number, number, number, number];

/** 2-D pooling (NHWC): the output's spatial size from the window, strides and padding; x's dtype. */
const pool2D: KernelShapeRule = (call) => {
  const x = call.input('x');
  const { filterSize, strides, pad, dimRoundingMode } = call.attrsAs<tf.MaxPoolAttrs>();
  return output(tf.backend_util.computePool2DInfo([...x.shape] as Shape4D, filterSize, strides, 1, pad, dimRoundingMode).outShape, x.dtype);
};

/** 3-D pooling: float32, as on the cpu backend. */
const pool3D: KernelShapeRule = (call) => {
  const x = call.input('x');
  const { filterSize, strides, pad, dimRoundingMode, dataFormat } = call.attrsAs<tf.MaxPool3DAttrs>();
  return output(tf.backend_util.computePool3DInfo([...x.shape] as Shape5D, filterSize, strides, 1, pad, dimRoundingMode, dataFormat).outShape, 'float32');
};

/** A pooling gradient: the forward input's shape, float32. */
const poolGradient: KernelShapeRule = (call) => output(call.input('input').shape, 'float32');

/** The pooling kernels and their gradients, by kernel name. */
export const POOLING_RULES: Readonly<Record<string, KernelShapeRule>> = {
  AvgPool: pool2D,
  MaxPool: pool2D,
  AvgPool3D: pool3D,
  MaxPool3D: pool3D,
  AvgPoolGrad: poolGradient,
  MaxPoolGrad: poolGradient,
  AvgPool3DGrad: poolGradient,
  MaxPool3DGrad: poolGradient,
  /** The pooled values (x's dtype) and the int32 positions of the maxima. */
  MaxPoolWithArgmax: (call) => {
    const x = call.input('x');
    const { filterSize, strides, pad } = call.attrsAs<tf.MaxPoolWithArgmaxAttrs>();
    const { outShape } = tf.backend_util.computePool2DInfo([...x.shape] as Shape4D, filterSize, strides, [1, 1], pad);
    return [output(outShape, x.dtype), output(outShape, 'int32')];
  },
};
