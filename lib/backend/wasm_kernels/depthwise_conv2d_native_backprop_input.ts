/**
 * `DepthwiseConv2dNativeBackpropInput` for the wasm backend, as one XNNPACK
 * depthwise convolution.
 *
 * The input gradient is the transposed depthwise convolution: spread `dy` by
 * the forward stride (zeros between its elements), then correlate it with the
 * filter turned by 180° at the forward dilation (see `inputGradientInput`).
 * Each (channel, multiplier) pair of the filter is its own channel of that
 * correlation, so it is one depthwise convolution with multiplier 1 over
 * `channels·multiplier` channels, whose result is summed over the multiplier.
 */
import * as tf from '@tensorflow/tfjs';
import { KernelCallScope } from './kernel_call_scope.js';
import { rotatedFilter } from './rotated_filter.js';
import { inputGradientInput } from './window_padding.js';

const BACKEND = 'wasm';

function depthwiseConv2dNativeBackpropInput({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { dy, filter } = inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
  const { strides, dilations, pad, dimRoundingMode, inputShape } = attrs as unknown as tf.DepthwiseConv2dNativeBackpropInputAttrs;
  const [filterHeight, filterWidth, channels, multiplier] = filter.shape as [number, number, number, number];
  const info = tf.backend_util.computeConv2DInfo(inputShape, [filterHeight, filterWidth, channels, multiplier], strides, dilations ?? 1, pad, dimRoundingMode, true);
  const { batchSize, inHeight, inWidth, dilationHeight, dilationWidth } = info;
  return KernelCallScope.run(BACKEND, backend as tf.KernelBackend, (k) => {
    const fitted = inputGradientInput(k, dy, info);
    const turned = k.reshape(rotatedFilter(k, filter), [filterHeight, filterWidth, channels * multiplier, 1]);
    const perMultiplier = k.call(tf.DepthwiseConv2dNative, { x: fitted.x, filter: turned }, { strides: [1, 1], dilations: [dilationHeight, dilationWidth], pad: fitted.pad });
    if (multiplier === 1) return perMultiplier;
    const split = k.reshape(perMultiplier, [batchSize, inHeight, inWidth, channels, multiplier]);
    return k.call(tf.Sum, { x: split }, { axis: [4], keepDims: false });
  });
}

/** The wasm kernel of `DepthwiseConv2dNativeBackpropInput` (any stride, dilation, padding and channel multiplier). */
export const depthwiseConv2dNativeBackpropInputConfig: tf.KernelConfig = {
  kernelName: tf.DepthwiseConv2dNativeBackpropInput,
  backendName: BACKEND,
  kernelFunc: depthwiseConv2dNativeBackpropInput,
};
