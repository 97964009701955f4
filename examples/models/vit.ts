/**
 * A Vision Transformer (ViT-B/16 by default) for image classification as a
 * tfjs function model, as Graphcore's PyTorch application builds it
 * (graphcore/examples vision/vit/pytorch: Hugging Face's `ViTForImageClassification`
 * for fine-tuning, models/modules.py's `VisionTransformer` for pre-training):
 * 16 × 16 patches embedded by a strided convolution, a class token and
 * learned positions with dropout, an encoder of `layers` pre-norm layers
 * (separate query, key and value projections, as both write them) placed on
 * IPUs by `layersPerIpu`, a layer norm over every token, and, on the class
 * token, an optional tanh representation layer and the linear classifier. It
 * computes its own softmax cross-entropy loss (`ops.identityLoss`) from its
 * inputs: the images and their one-hot labels.
 */
import { Block, ops, tf } from 'poptfjs';
import { attentionContext, dense, gelu, ipuOfEachLayer, layerNorm, ParameterFactory, truncatedNormal, type DenseWeights, type NormWeights } from './transformer.js';

/** The sizes of a ViT and its regularization. */
export interface VitConfig {
  readonly imageSize: number;
  readonly patchSize: number;
  readonly hiddenSize: number;
  readonly layers: number;
  readonly heads: number;
  readonly intermediateSize: number;
  readonly classes: number;
  /** Dropout on the embeddings and after the attention's and the feed-forward's output projections. */
  readonly hiddenDropout: number;
  /** Dropout on the attention probabilities. */
  readonly attentionDropout: number;
  /** Dropout after the feed-forward's GELU too (modules.py's `Mlp`; Hugging Face's ViT has none there). */
  readonly dropoutAfterActivation?: boolean;
  /** Width of the tanh representation layer between the class token and the classifier (pre-training), if any. */
  readonly representationSize?: number;
}

/**
 * ViT-B/16 at 224 × 224 for ImageNet-1k fine-tuning, as configs.yml's `b16_imagenet1k` sets it: 86 M parameters,
 * hidden dropout 0.1, no attention dropout.
 */
export const VIT_B16: VitConfig = {
  imageSize: 224,
  patchSize: 16,
  hiddenSize: 768,
  layers: 12,
  heads: 12,
  intermediateSize: 3072,
  classes: 1000,
  hiddenDropout: 0.1,
  attentionDropout: 0,
};

/**
 * ViT-B/16 pre-training on ImageNet-1k, as configs.yml's `b16_in1k_pretrain_lamb` sets it: a 768-wide
 * representation layer and attention dropout 0.1; its `drop_path_rate: 0.0` turns stochastic depth off.
 */
export const VIT_B16_PRETRAINING: VitConfig = { ...VIT_B16, attentionDropout: 0.1, dropoutAfterActivation: true, representationSize: 768 };

/** Where the parts run, and how. */
export interface VitPlacement {
  /** Encoder layers per IPU; the patch embedding is on IPU 0 and the head on the last. */
  readonly layersPerIpu: readonly number[];
  /** Hold the weights in float16. */
  readonly float16?: boolean;
  /** Keep each encoder layer's output as a recomputation checkpoint (default true). */
  readonly checkpointEveryLayer?: boolean;
  /**
   * Layers whose attention block's output (after its residual) is a recomputation checkpoint too: configs.yml's
   * `recompute_mid_layers`, which models/modules.py's `Block` reads (pre-training).
   */
  readonly midLayerCheckpoints?: readonly number[];
}

/** The parameters of one pre-norm ViT layer. */
interface VitLayerWeights {
  readonly attentionNorm: NormWeights;
  readonly query: DenseWeights;
  readonly key: DenseWeights;
  readonly value: DenseWeights;
  readonly output: DenseWeights;
  readonly ffnNorm: NormWeights;
  readonly intermediate: DenseWeights;
  readonly ffnOutput: DenseWeights;
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
  const layers: VitLayerWeights[] = Array.from({ length: config.layers }, (_, i) => ({
    attentionNorm: make.norm(h, `layer${i}/attention_norm`),
    query: make.dense(h, h, `layer${i}/query`),
    key: make.dense(h, h, `layer${i}/key`),
    value: make.dense(h, h, `layer${i}/value`),
    output: make.dense(h, h, `layer${i}/attention_output`),
    ffnNorm: make.norm(h, `layer${i}/ffn_norm`),
    intermediate: make.dense(h, config.intermediateSize, `layer${i}/intermediate`),
    ffnOutput: make.dense(config.intermediateSize, h, `layer${i}/ffn_output`),
  }));
  const representation = config.representationSize === undefined ? undefined : make.dense(h, config.representationSize, 'head/representation');
  const head = { norm: make.norm(h, 'head/norm'), classifier: make.dense(config.representationSize ?? h, config.classes, 'head/classifier') };
  const ipuOfLayer = ipuOfEachLayer(placement.layersPerIpu, config.layers);
  const lastIpu = placement.layersPerIpu.length - 1;
  const epsilon = 1e-6;
  const dropout = (t: tf.Tensor, rate: number) => (rate > 0 ? tf.dropout(t, rate) : t);

  return (images, labels) => {
    const batch = images.shape[0]!;
    const sequence = patches + 1;
    const shape = { batch, sequence, hidden: h, heads: config.heads, dropout: config.hiddenDropout, epsilon };
    let x = Block.run({ userId: 'embedding', ipuId: 0 }, () => {
      const embedded = tf.add(tf.conv2d(images as tf.Tensor4D, embedding.kernel as tf.Variable<tf.Rank.R4>, config.patchSize, 'valid'), embedding.bias);
      const tokens = tf.concat([tf.tile(embedding.classToken, [batch, 1, 1]), tf.reshape(embedded, [batch, patches, h])], 1);
      return dropout(tf.reshape(tf.add(tokens, embedding.positions), [batch * sequence, h]), config.hiddenDropout);
    });
    layers.forEach((layer, i) => {
      x = Block.run({ userId: `layer${i}`, ipuId: ipuOfLayer[i]! }, () => {
        const normed = layerNorm(x, layer.attentionNorm, epsilon);
        const context = attentionContext(dense(normed, layer.query), dense(normed, layer.key), dense(normed, layer.value), shape, config.attentionDropout);
        const residual = tf.add(x, dropout(dense(context, layer.output), config.hiddenDropout));
        const attended = placement.midLayerCheckpoints?.includes(i) ? (ops.recomputationCheckpoint(residual) as tf.Tensor) : residual;
        const activated = gelu(dense(layerNorm(attended, layer.ffnNorm, epsilon), layer.intermediate));
        const ffn = dense(config.dropoutAfterActivation ? dropout(activated, config.hiddenDropout) : activated, layer.ffnOutput);
        const out = tf.add(attended, dropout(ffn, config.hiddenDropout));
        return placement.checkpointEveryLayer === false ? out : ops.recomputationCheckpoint(out);
      });
    });
    return Block.run({ userId: 'head', ipuId: lastIpu }, () => {
      const normed = layerNorm(x, head.norm, epsilon);
      const cls = tf.reshape(tf.slice(tf.reshape(normed, [batch, sequence, h]), [0, 0, 0], [batch, 1, h]), [batch, h]);
      const preLogits = representation ? tf.tanh(dense(cls, representation)) : cls;
      const logits = dense(preLogits, head.classifier);
      const loss = tf.neg(tf.mean(tf.sum(tf.mul(labels, tf.logSoftmax(logits)), -1)));
      return [logits, ops.identityLoss(loss, 'none')];
    });
  };
}
