/**
 * `DepthwiseConv2dNativeBackpropInput` for the wasm backend, as one XNNPACK
 * depthwise convolution.
 *
 * The input gradient is the transposed depthwise convolution: spread `dy` by
 * the forward stride (zeros between its elements), then correlate it with the
 * filter turned by 180° at the forward dilation. Each (channel, multiplier)
 * pair of the filter is its own channel of that correlation, so it is one
 * depthwise convolution with multiplier 1 over `channels·multiplier`
 * channels, whose result is summed over the multiplier. Its padding puts the
 * window's first tap `(filterSize - 1)·dilation - forwardPad` elements before
 * the spread `dy`, and the window ends where the input does; parts of `dy`
 * the window never reaches are cropped.
 */
import * as tf from '@tensorflow/tfjs';
import { KernelCallScope } from './kernel_call_scope.js';
import { fitToPadding, padToExtent } from './window_padding.js';

const BACKEND = 'wasm';

/** `dy` with `strideHeight - 1` zero rows after each row and `strideWidth - 1` zero columns after each column. */
function spread(k: KernelCallScope, dy: tf.TensorInfo, strideHeight: number, strideWidth: number): tf.TensorInfo {
  if (strideHeight === 1 && strideWidth === 1) return dy;
  const [batch, height, width, channels] = dy.shape as [number, number, number, number];
  const gaps = k.call(
    tf.PadV2,
    { x: k.reshape(dy, [batch, height, 1, width, 1, channels]) },
    { paddings: [[0, 0], [0, 0], [0, strideHeight - 1], [0, 0], [0, strideWidth - 1], [0, 0]], constantValue: 0 },
  );
  return k.reshape(gaps, [batch, height * strideHeight, width * strideWidth, channels]);
}

function depthwiseConv2dNativeBackpropInput({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { dy, filter } = inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
  const { strides, dilations, pad, dimRoundingMode, inputShape } = attrs as unknown as tf.DepthwiseConv2dNativeBackpropInputAttrs;
  const [filterHeight, filterWidth, channels, multiplier] = filter.shape as [number, number, number, number];
  const info = tf.backend_util.computeConv2DInfo(
    inputShape,
    [filterHeight, filterWidth, channels, multiplier],
    strides,
    dilations ?? 1,
    pad,
    dimRoundingMode,
    true,
  );
  const { batchSize, inHeight, inWidth, strideHeight, strideWidth, dilationHeight, dilationWidth } = info;
  return KernelCallScope.run(BACKEND, backend as tf.KernelBackend, (k) => {
    const spreadDy = spread(k, dy, strideHeight, strideWidth);
    const reachHeight = (filterHeight - 1) * dilationHeight;
    const reachWidth = (filterWidth - 1) * dilationWidth;
    const rows = padToExtent(spreadDy.shape[1]!, reachHeight - info.padInfo.top, inHeight + reachHeight);
    const cols = padToExtent(spreadDy.shape[2]!, reachWidth - info.padInfo.left, inWidth + reachWidth);
    const fitted = fitToPadding(k, spreadDy, rows, cols);
    const turned = k.reshape(k.call(tf.Reverse, { x: filter }, { dims: [0, 1] }), [filterHeight, filterWidth, channels * multiplier, 1]);
    const perMultiplier = k.call(
      tf.DepthwiseConv2dNative,
      { x: fitted.x, filter: turned },
      { strides: [1, 1], dilations: [dilationHeight, dilationWidth], pad: fitted.pad },
    );
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
