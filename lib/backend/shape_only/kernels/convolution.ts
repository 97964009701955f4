/**
 * Shape rules of convolutions and their gradients, 2-D, 3-D, depthwise,
 * fused and morphological (`Dilation2D`), computed with tfjs's
 * `computeConv2DInfo`, `computeConv3DInfo` and `computeDilation2DInfo` as the
 * cpu backend does.
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelCall, type KernelShapeRule, type OutputSpec } from '../rules/kernel_shape_rule.js';

type Shape4D = [number, number, number, number];
type Shape5D = [number, number, number, number, number];

function conv2DInfo(
  inShape: readonly number[],
  filterShape: readonly number[],
  attrs: { strides: number | [number, number]; pad: tf.Conv2DAttrs['pad']; dimRoundingMode?: 'floor' | 'round' | 'ceil' },
  dilations: number | [number, number],
  depthwise: boolean,
  dataFormat: 'NHWC' | 'NCHW' = 'NHWC',
): tf.backend_util.Conv2DInfo {
  return tf.backend_util.computeConv2DInfo(
    [...inShape] as Shape4D,
    [...filterShape] as Shape4D,
    attrs.strides,
    dilations,
    attrs.pad,
    attrs.dimRoundingMode,
    depthwise,
    tf.backend_util.convertConv2DDataFormat(dataFormat),
  );
}

/** `Conv2D`: x's batch, the output's spatial size, the filter's output channels, in x's layout. */
const conv2D: KernelShapeRule = (call) => {
  const x = call.input('x');
  const attrs = call.attrsAs<tf.Conv2DAttrs>();
  return output(conv2DInfo(x.shape, call.input('filter').shape, attrs, attrs.dilations, false, attrs.dataFormat).outShape, x.dtype);
};

/**
 * `DepthwiseConv2dNative`: like the cpu (and wasm, webgl) backend, the
 * layout is always NHWC, whatever `dataFormat` says; dilations default to 1.
 */
function depthwiseOutput(call: KernelCall): OutputSpec {
  const x = call.input('x');
  const attrs = call.attrsAs<tf.DepthwiseConv2dNativeAttrs>();
  return output(conv2DInfo(x.shape, call.input('filter').shape, attrs, attrs.dilations ?? [1, 1], true).outShape, x.dtype);
}

/**
 * The output of a fused convolution: the convolution, plus a bias and a
 * prelu activation broadcast into it (a vector aligned with the channels in
 * NCHW, as the cpu backend reshapes it).
 */
function fusedOutput(call: KernelCall, convolution: OutputSpec): OutputSpec {
  const { dataFormat, activation } = call.attrsAs<tf.FusedConv2DAttrs>();
  const alignedWithChannels = (tensor: tf.TensorInfo): number[] =>
    dataFormat === 'NCHW' && tensor.shape.length === 1 && tensor.shape[0] !== 1 ? [tensor.shape[0]!, 1, 1] : [...tensor.shape];
  let shape = [...convolution.shape];
  const bias = call.optionalInput('bias');
  if (bias !== undefined) shape = tf.backend_util.assertAndGetBroadcastShape(shape, alignedWithChannels(bias));
  if (activation !== 'prelu') return output(shape, convolution.dtype);
  return output(tf.backend_util.assertAndGetBroadcastShape(shape, alignedWithChannels(call.input('preluActivationWeights'))), 'float32');
}

/** `Conv3D`: NDHWC, as on the cpu backend. */
const conv3D: KernelShapeRule = (call) => {
  const x = call.input('x');
  const { strides, dilations, pad } = call.attrsAs<tf.Conv3DAttrs>();
  return output(tf.backend_util.computeConv3DInfo([...x.shape] as Shape5D, [...call.input('filter').shape] as Shape5D, strides, dilations, pad).outShape, x.dtype);
};

/** The convolutions and their gradients, by kernel name. */
export const CONVOLUTION_RULES: Readonly<Record<string, KernelShapeRule>> = {
  Conv2D: conv2D,
  /** The filter gradient: `filterShape`, float32. */
  Conv2DBackpropFilter: (call) => {
    const attrs = call.attrsAs<tf.Conv2DBackpropFilterAttrs>();
    return output(conv2DInfo(call.input('x').shape, attrs.filterShape, attrs, 1, false, attrs.dataFormat).filterShape, 'float32');
  },
  /** The input gradient: `inputShape`, float32. */
  Conv2DBackpropInput: (call) => {
    const attrs = call.attrsAs<tf.Conv2DBackpropInputAttrs>();
    return output(conv2DInfo(attrs.inputShape, call.input('filter').shape, attrs, 1, false, attrs.dataFormat).inShape, 'float32');
  },
  FusedConv2D: (call) => fusedOutput(call, conv2D(call) as OutputSpec),
  DepthwiseConv2dNative: depthwiseOutput,
  FusedDepthwiseConv2D: (call) => fusedOutput(call, depthwiseOutput(call)),
  DepthwiseConv2dNativeBackpropFilter: (call) => {
    const attrs = call.attrsAs<tf.DepthwiseConv2dNativeBackpropFilterAttrs>();
    return output(conv2DInfo(call.input('x').shape, attrs.filterShape, attrs, attrs.dilations, true).filterShape, 'float32');
  },
  DepthwiseConv2dNativeBackpropInput: (call) => {
    const attrs = call.attrsAs<tf.DepthwiseConv2dNativeBackpropInputAttrs>();
    return output(conv2DInfo(attrs.inputShape, call.input('filter').shape, attrs, attrs.dilations, true).inShape, 'float32');
  },
  Conv3D: conv3D,
  Conv3DBackpropFilterV2: (call) => {
    const { strides, pad, filterShape } = call.attrsAs<tf.Conv3DBackpropFilterV2Attrs>();
    return output(tf.backend_util.computeConv3DInfo([...call.input('x').shape] as Shape5D, filterShape, strides, 1, pad).filterShape, 'float32');
  },
  Conv3DBackpropInputV2: (call) => {
    const { strides, pad, inputShape } = call.attrsAs<tf.Conv3DBackpropInputV2Attrs>();
    return output(tf.backend_util.computeConv3DInfo(inputShape, [...call.input('filter').shape] as Shape5D, strides, 1, pad).inShape, 'float32');
  },
  /** Grey-scale dilation (NHWC): the output's spatial size as a convolution's, x's channels. */
  Dilation2D: (call) => {
    const x = call.input('x');
    const { strides, pad, dilations } = call.attrsAs<tf.Dilation2DAttrs>();
    return output(
      tf.backend_util.computeDilation2DInfo([...x.shape] as Shape4D, [...call.input('filter').shape] as [number, number, number], strides, pad, 'NHWC', dilations).outShape,
      x.dtype,
    );
  },
  Dilation2DBackpropFilter: (call) => {
    const filter = call.input('filter');
    return output(filter.shape, filter.dtype);
  },
  Dilation2DBackpropInput: (call) => {
    const x = call.input('x');
    return output(x.shape, x.dtype);
  },
};
