/**
 * MobileNetV2 as Keras builds it (`keras.applications.MobileNetV2`, alpha
 * 1.0): a 3×3 stride-2 stem of 32 filters, 17 inverted residual blocks
 * (a 1×1 expansion by 6 — none in the first block —, a 3×3 depthwise
 * convolution, a linear 1×1 projection; batch norm after each convolution,
 * ReLU6 after the first two; a residual connection when the block keeps its
 * shape), a 1×1 convolution to 1280 channels, global average pooling and a
 * 1000-way classifier. 3.5 M parameters at 1000 classes; random weights (no
 * download).
 */
import { tf } from 'poptfjs';

/** Options of {@link mobilenetV2}. */
export interface MobileNetV2Options {
  /** Image side (default 224). */
  readonly imageSize?: number;
  /** Classes of the classifier (default 1000). */
  readonly classes?: number;
  /** Seeds the initializers, so two builds have the same weights (default 1). */
  readonly seed?: number;
}

/** The inverted residual blocks: expansion, output channels, repeats, first stride (Keras's table). */
const BLOCKS: ReadonlyArray<readonly [expansion: number, channels: number, repeats: number, stride: number]> = [
  [1, 16, 1, 1],
  [6, 24, 2, 2],
  [6, 32, 3, 2],
  [6, 64, 4, 2],
  [6, 96, 3, 1],
  [6, 160, 3, 2],
  [6, 320, 1, 1],
];

/** MobileNetV2 taking `[batch, size, size, 3]` images and returning class probabilities (softmax), as Keras's. */
export function mobilenetV2(options: MobileNetV2Options = {}): tf.LayersModel {
  const size = options.imageSize ?? 224;
  let seed = options.seed ?? 1;
  const init = () => tf.initializers.glorotUniform({ seed: seed++ });
  const input = tf.input({ shape: [size, size, 3], name: 'input' });
  const conv = (x: tf.SymbolicTensor, filters: number, kernel: number, stride: number, name: string) =>
    tf.layers.conv2d({ filters, kernelSize: kernel, strides: stride, padding: 'same', useBias: false, kernelInitializer: init(), name }).apply(x) as tf.SymbolicTensor;
  const depthwise = (x: tf.SymbolicTensor, stride: number, name: string) =>
    tf.layers.depthwiseConv2d({ kernelSize: 3, strides: stride, padding: 'same', useBias: false, depthwiseInitializer: init(), name }).apply(x) as tf.SymbolicTensor;
  const bn = (x: tf.SymbolicTensor, name: string) => tf.layers.batchNormalization({ epsilon: 1e-3, momentum: 0.999, name }).apply(x) as tf.SymbolicTensor;
  const relu6 = (x: tf.SymbolicTensor, name: string) => tf.layers.reLU({ maxValue: 6, name }).apply(x) as tf.SymbolicTensor;

  let x = relu6(bn(conv(input, 32, 3, 2, 'Conv1'), 'bn_Conv1'), 'Conv1_relu');
  let channels = 32;
  let index = 0;
  for (const [expansion, outChannels, repeats, firstStride] of BLOCKS) {
    for (let r = 0; r < repeats; r++) {
      const stride = r === 0 ? firstStride : 1;
      const prefix = index === 0 ? 'expanded_conv' : `block_${index}`;
      let y = x;
      if (expansion !== 1) y = relu6(bn(conv(y, channels * expansion, 1, 1, `${prefix}_expand`), `${prefix}_expand_BN`), `${prefix}_expand_relu`);
      y = relu6(bn(depthwise(y, stride, `${prefix}_depthwise`), `${prefix}_depthwise_BN`), `${prefix}_depthwise_relu`);
      y = bn(conv(y, outChannels, 1, 1, `${prefix}_project`), `${prefix}_project_BN`);
      x = stride === 1 && channels === outChannels ? (tf.layers.add({ name: `${prefix}_add` }).apply([x, y]) as tf.SymbolicTensor) : y;
      channels = outChannels;
      index++;
    }
  }
  x = relu6(bn(conv(x, 1280, 1, 1, 'Conv_1'), 'Conv_1_bn'), 'out_relu');
  x = tf.layers.globalAveragePooling2d({ name: 'global_average_pooling2d' }).apply(x) as tf.SymbolicTensor;
  const output = tf.layers.dense({ units: options.classes ?? 1000, activation: 'softmax', kernelInitializer: init(), name: 'predictions' }).apply(x) as tf.SymbolicTensor;
  return tf.model({ inputs: input, outputs: output, name: 'mobilenetv2_1.00_224' });
}
