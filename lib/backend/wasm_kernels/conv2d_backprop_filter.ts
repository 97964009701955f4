/**
 * `Conv2DBackpropFilter` for the wasm backend, as one XNNPACK convolution.
 *
 * The filter gradient `dW[i, j, ci, co] = Σ_b,y,x x[b, y·s + i - pad, x·s + j - pad, ci] · dy[b, y, x, co]`
 * is itself a convolution once the batch and channel axes of `x` are swapped:
 * the input is `x` as `[inChannels, height, width, batch]` (channels become
 * images, examples become channels), the filter is `dy` as
 * `[outHeight, outWidth, batch, outChannels]`, the forward stride becomes the
 * dilation, the forward dilation the stride, and the forward padding becomes
 * explicit padding (or a crop where the forward convolution never read the
 * last rows). The result `[inChannels, filterHeight, filterWidth, outChannels]`
 * is transposed into the filter's layout. NCHW inputs only change the two
 * transposes.
 */
import * as tf from '@tensorflow/tfjs';
import { KernelCallScope } from './kernel_call_scope.js';
import { filterGradientPadding, fitToPadding } from './window_padding.js';

const BACKEND = 'wasm';

function conv2DBackpropFilter({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { x, dy } = inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
  const { strides, pad, dataFormat, dimRoundingMode, filterShape } = attrs as unknown as tf.Conv2DBackpropFilterAttrs;
  const info = tf.backend_util.computeConv2DInfo(
    x.shape as [number, number, number, number],
    filterShape,
    strides,
    1,
    pad,
    dimRoundingMode,
    false,
    tf.backend_util.convertConv2DDataFormat(dataFormat),
  );
  const channelsLast = info.dataFormat === 'channelsLast';
  return KernelCallScope.run(BACKEND, backend as tf.KernelBackend, (k) => {
    const images = k.transpose(x, channelsLast ? [3, 1, 2, 0] : [1, 2, 3, 0]);
    const filter = k.transpose(dy, channelsLast ? [1, 2, 0, 3] : [2, 3, 0, 1]);
    const { rows, cols } = filterGradientPadding(info);
    const fitted = fitToPadding(k, images, rows, cols);
    const gradient = k.call(
      tf.Conv2D,
      { x: fitted.x, filter },
      {
        strides: [info.dilationHeight, info.dilationWidth],
        dilations: [info.strideHeight, info.strideWidth],
        pad: fitted.pad,
        dataFormat: 'NHWC',
      },
    );
    return k.transpose(gradient, [1, 2, 0, 3]);
  });
}

/** The wasm kernel of `Conv2DBackpropFilter` (NHWC and NCHW, any stride and padding). */
export const conv2DBackpropFilterConfig: tf.KernelConfig = {
  kernelName: tf.Conv2DBackpropFilter,
  backendName: BACKEND,
  kernelFunc: conv2DBackpropFilter,
};
