/**
 * A Vision Transformer (ViT-B/16 by default) for image classification as a
 * tfjs function model: 16 × 16 patches embedded by a strided convolution, a
 * class token and learned positions, an encoder of `layers` layers placed on
 * IPUs by `layersPerIpu`, and a linear classifier on the class token. It
 * computes its own softmax cross-entropy loss (`ops.identityLoss`) from its
 * inputs: the images and their one-hot labels.
 */
import { Block, ops, tf } from 'poptfjs';
import { encoderLayer, ipuOfEachLayer, layerNorm, ParameterFactory, truncatedNormal } from './transformer.js';

/** The sizes of a ViT. */
export interface VitConfig {
  readonly imageSize: number;
  readonly patchSize: number;
  readonly hiddenSize: number;
  readonly layers: number;
  readonly heads: number;
  readonly intermediateSize: number;
  readonly classes: number;
  readonly dropout: number;
}

/** ViT-B/16 at 224 × 224 for ImageNet-1k: 86 M parameters. */
export const VIT_B16: VitConfig = { imageSize: 224, patchSize: 16, hiddenSize: 768, layers: 12, heads: 12, intermediateSize: 3072, classes: 1000, dropout: 0.1 };

/** Where the parts run, and how. */
export interface VitPlacement {
  /** Encoder layers per IPU; the patch embedding is on IPU 0 and the classifier on the last. */
  readonly layersPerIpu: readonly number[];
  /** Hold the weights in float16. */
  readonly float16?: boolean;
  /** Keep each encoder layer's output as a recomputation checkpoint (default true). */
  readonly checkpointEveryLayer?: boolean;
}

/** The ViT as a function of `(images, oneHotLabels)` returning `[logits, loss]`. */
export function vitClassifier(config: VitConfig, placement: VitPlacement): (images: tf.Tensor, labels: tf.Tensor) => tf.Tensor[] {
  const h = config.hiddenSize;
  const make = new ParameterFactory('vit', truncatedNormal, placement.float16 === true);
  const patches = (config.imageSize / config.patchSize) ** 2;
  const embedding = {
    kernel: make.weight([config.patchSize, config.patchSize, 3, h], 'patch/kernel'),
    bias: make.zeros([h], 'patch/bias'),
    classToken: make.zeros([1, 1, h], 'class_token'),
    positions: make.weight([1, patches + 1, h], 'positions'),
  };
  const layers = Array.from({ length: config.layers }, (_, i) => make.encoderLayer(h, config.intermediateSize, `layer${i}`));
  const head = { norm: make.norm(h, 'head/norm'), classifier: make.dense(h, config.classes, 'head/classifier') };
  const ipuOfLayer = ipuOfEachLayer(placement.layersPerIpu, config.layers);
  const lastIpu = placement.layersPerIpu.length - 1;
  const epsilon = 1e-6;

  return (images, labels) => {
    const batch = images.shape[0]!;
    const sequence = patches + 1;
    const shape = { batch, sequence, hidden: h, heads: config.heads, dropout: config.dropout, epsilon };
    let x = Block.run({ userId: 'embedding', ipuId: 0 }, () => {
      const embedded = tf.add(tf.conv2d(images as tf.Tensor4D, embedding.kernel as tf.Variable<tf.Rank.R4>, config.patchSize, 'valid'), embedding.bias);
      const tokens = tf.concat([tf.tile(embedding.classToken, [batch, 1, 1]), tf.reshape(embedded, [batch, patches, h])], 1);
      return tf.reshape(tf.add(tokens, embedding.positions), [batch * sequence, h]);
    });
    layers.forEach((layer, i) => {
      x = Block.run({ userId: `layer${i}`, ipuId: ipuOfLayer[i]! }, () => {
        const out = encoderLayer(x, layer, shape);
        return placement.checkpointEveryLayer === false ? out : ops.recomputationCheckpoint(out);
      });
    });
    return Block.run({ userId: 'head', ipuId: lastIpu }, () => {
      const cls = tf.reshape(tf.slice(tf.reshape(x, [batch, sequence, h]), [0, 0, 0], [batch, 1, h]), [batch, h]);
      const logits = tf.add(tf.matMul(layerNorm(cls, head.norm, epsilon), head.classifier.kernel), head.classifier.bias);
      const loss = tf.neg(tf.mean(tf.sum(tf.mul(labels, tf.logSoftmax(logits)), -1)));
      return [logits, ops.identityLoss(loss, 'none')];
    });
  };
}
