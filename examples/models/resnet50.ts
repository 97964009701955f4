/**
 * ResNet-50 v1.5 for ImageNet as a tfjs layers model (channels last): a 7×7
 * stem, four stages of bottleneck blocks (3, 4, 6, 3) with the stride on the
 * 3×3 convolution, global average pooling and a 1000-way classifier;
 * 25.6 M parameters.
 */
import { ops, tf } from 'poptfjs';

/** Options of {@link resnet50}. */
export interface ResNetOptions {
  /** Image side (default 224). */
  readonly imageSize?: number;
  readonly classes?: number;
  /**
   * Keep the output of each of these bottleneck blocks (`'stage2/unit1'`, ...) as a
   * recomputation checkpoint, as Graphcore's ResNet-50 examples do with
   * their recomputation splits.
   */
  readonly checkpoints?: readonly string[];
}

/** A layer that marks its input as a recomputation checkpoint. */
class Checkpoint extends tf.layers.Layer {
  static readonly className = 'PoptfjsCheckpoint';
  override call(inputs: tf.Tensor | tf.Tensor[]): tf.Tensor {
    return ops.recomputationCheckpoint(Array.isArray(inputs) ? inputs[0]! : inputs);
  }
}

/** ResNet-50 v1.5 taking `[batch, size, size, 3]` images and returning logits. */
export function resnet50(options: ResNetOptions = {}): tf.LayersModel {
  const size = options.imageSize ?? 224;
  const checkpoints = new Set(options.checkpoints ?? []);
  const input = tf.input({ shape: [size, size, 3] });
  const conv = (x: tf.SymbolicTensor, filters: number, kernel: number, stride: number, name: string) =>
    tf.layers.conv2d({ filters, kernelSize: kernel, strides: stride, padding: 'same', useBias: false, name }).apply(x) as tf.SymbolicTensor;
  const bn = (x: tf.SymbolicTensor, name: string) => tf.layers.batchNormalization({ axis: -1, name }).apply(x) as tf.SymbolicTensor;
  const relu = (x: tf.SymbolicTensor) => tf.layers.reLU().apply(x) as tf.SymbolicTensor;

  let x = relu(bn(conv(input, 64, 7, 2, 'stem/conv'), 'stem/bn'));
  x = tf.layers.maxPooling2d({ poolSize: 3, strides: 2, padding: 'same' }).apply(x) as tf.SymbolicTensor;
  const stages: Array<[blocks: number, width: number]> = [
    [3, 64],
    [4, 128],
    [6, 256],
    [3, 512],
  ];
  stages.forEach(([blocks, width], s) => {
    for (let b = 0; b < blocks; b++) {
      const name = `stage${s + 1}/unit${b + 1}`;
      const stride = b === 0 && s > 0 ? 2 : 1;
      let shortcut = x;
      if (b === 0) shortcut = bn(conv(x, 4 * width, 1, stride, `${name}/shortcut`), `${name}/shortcut_bn`);
      let y = relu(bn(conv(x, width, 1, 1, `${name}/conv1`), `${name}/bn1`));
      y = relu(bn(conv(y, width, 3, stride, `${name}/conv2`), `${name}/bn2`));
      y = bn(conv(y, 4 * width, 1, 1, `${name}/conv3`), `${name}/bn3`);
      x = relu(tf.layers.add().apply([y, shortcut]) as tf.SymbolicTensor);
      if (checkpoints.has(name)) x = new Checkpoint({ name: `${name}/checkpoint` }).apply(x) as tf.SymbolicTensor;
    }
  });
  x = tf.layers.globalAveragePooling2d({}).apply(x) as tf.SymbolicTensor;
  const logits = tf.layers.dense({ units: options.classes ?? 1000, name: 'classifier' }).apply(x) as tf.SymbolicTensor;
  return tf.model({ inputs: input, outputs: logits, name: 'resnet50' });
}
