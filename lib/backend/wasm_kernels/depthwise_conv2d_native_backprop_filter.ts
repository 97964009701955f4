/**
 * `DepthwiseConv2dNativeBackpropFilter` for the wasm backend, as one XNNPACK
 * depthwise convolution.
 *
 * Each (example, channel) pair is an independent correlation of one input
 * plane with the output-gradient planes of that channel, so the whole batch
 * is one depthwise convolution of a single image: the input is `x` as
 * `[1, height, width, batch·channels]`, the filter is `dy` as
 * `[outHeight, outWidth, batch·channels, multiplier]`, the forward stride
 * becomes the dilation and the forward dilation the stride, and the forward
 * padding becomes explicit padding (or a crop). Summing the result
 * `[filterHeight, filterWidth, batch, channels·multiplier]` over the batch
 * gives the filter gradient.
 */
import * as tf from '@tensorflow/tfjs';
import { KernelCallScope } from './kernel_call_scope.js';
import { filterGradientPadding, fitToPadding } from './window_padding.js';

const BACKEND = 'wasm';

function depthwiseConv2dNativeBackpropFilter({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { x, dy } = inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
  const { strides, dilations, pad, dimRoundingMode, filterShape } = attrs as unknown as tf.DepthwiseConv2dNativeBackpropFilterAttrs;
  const info = tf.backend_util.computeConv2DInfo(x.shape as [number, number, number, number], filterShape, strides, dilations ?? 1, pad, dimRoundingMode, true);
  const [filterHeight, filterWidth, channels, multiplier] = filterShape;
  const { batchSize, inHeight, inWidth, outHeight, outWidth } = info;
  return KernelCallScope.run(BACKEND, backend as tf.KernelBackend, (k) => {
    const image = k.reshape(k.transpose(x, [1, 2, 0, 3]), [1, inHeight, inWidth, batchSize * channels]);
    const filter = k.reshape(k.transpose(dy, [1, 2, 0, 3]), [outHeight, outWidth, batchSize * channels, multiplier]);
    const { rows, cols } = filterGradientPadding(info);
    const fitted = fitToPadding(k, image, rows, cols);
    const perExample = k.call(
      tf.DepthwiseConv2dNative,
      { x: fitted.x, filter },
      {
        strides: [info.dilationHeight, info.dilationWidth],
        dilations: [info.strideHeight, info.strideWidth],
        pad: fitted.pad,
      },
    );
    const byExample = k.reshape(perExample, [filterHeight, filterWidth, batchSize, channels * multiplier]);
    const gradient = k.call(tf.Sum, { x: byExample }, { axis: [2], keepDims: false });
    return k.reshape(gradient, filterShape);
  });
}

/** The wasm kernel of `DepthwiseConv2dNativeBackpropFilter` (any stride, dilation, padding and channel multiplier). */
export const depthwiseConv2dNativeBackpropFilterConfig: tf.KernelConfig = {
  kernelName: tf.DepthwiseConv2dNativeBackpropFilter,
  backendName: BACKEND,
  kernelFunc: depthwiseConv2dNativeBackpropFilter,
};
