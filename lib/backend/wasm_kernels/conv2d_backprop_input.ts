/**
 * `Conv2DBackpropInput` for the wasm backend, as one XNNPACK convolution.
 *
 * The input gradient is the transposed convolution: spread `dy` by the
 * forward strides (zeros between its elements), pad it (see
 * `inputGradientInput`), and correlate it at stride 1 and the forward
 * dilation with the filter turned by 180° whose input and output channels
 * are swapped (`[filterHeight, filterWidth, outChannels, inChannels]`). The
 * wasm backend's own kernel is a plain loop, about ten times slower on a
 * small CNN's shapes. XNNPACK convolves NHWC only, so NCHW tensors are
 * transposed on the way in and out.
 *
 * tfjs's `Conv2DBackpropInput` has no dilations (its ops refuse dilated
 * gradients); TensorFlow's has, and a `dilations` attribute, when present,
 * is honoured.
 */
import * as tf from '@tensorflow/tfjs';
import { KernelCallScope } from './kernel_call_scope.js';
import { rotatedFilter } from './rotated_filter.js';
import { inputGradientInput } from './window_padding.js';

const BACKEND = 'wasm';

/** The attributes of `Conv2DBackpropInput`, with TensorFlow's optional dilations. */
interface Conv2DBackpropInputAttrs extends tf.Conv2DBackpropInputAttrs {
  readonly dilations?: number | [number, number];
}

function conv2DBackpropInput({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { dy, filter } = inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
  const { strides, dilations, pad, dataFormat, dimRoundingMode, inputShape } = attrs as unknown as Conv2DBackpropInputAttrs;
  const info = tf.backend_util.computeConv2DInfo(
    inputShape,
    filter.shape as [number, number, number, number],
    strides,
    dilations ?? 1,
    pad,
    dimRoundingMode,
    false,
    tf.backend_util.convertConv2DDataFormat(dataFormat),
  );
  const channelsLast = info.dataFormat === 'channelsLast';
  return KernelCallScope.run(BACKEND, backend as tf.KernelBackend, (k) => {
    const dyNHWC = channelsLast ? dy : k.transpose(dy, [0, 2, 3, 1]);
    const fitted = inputGradientInput(k, dyNHWC, info);
    const turned = k.transpose(rotatedFilter(k, filter), [0, 1, 3, 2]);
    const dx = k.call(
      tf.Conv2D,
      { x: fitted.x, filter: turned },
      { strides: [1, 1], dilations: [info.dilationHeight, info.dilationWidth], pad: fitted.pad, dataFormat: 'NHWC' },
    );
    return channelsLast ? dx : k.transpose(dx, [0, 3, 1, 2]);
  });
}

/** The wasm kernel of `Conv2DBackpropInput` (NHWC and NCHW, any stride, dilation and padding). */
export const conv2DBackpropInputConfig: tf.KernelConfig = {
  kernelName: tf.Conv2DBackpropInput,
  backendName: BACKEND,
  kernelFunc: conv2DBackpropInput,
};
