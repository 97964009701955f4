/**
 * BERT pre-training (masked language model and next-sentence prediction) as
 * a tfjs function model, with the layer sizes of BERT-Base and BERT-Large,
 * its parts placed on IPUs the way Graphcore's BERT examples place them:
 * the embeddings and the first encoder layers on IPU 0, the other layers
 * spread over the next IPUs, and the heads (which share the word embedding)
 * back on IPU 0.
 *
 * The model computes its own loss (`ops.identityLoss`): its inputs are the
 * token ids, token types, attention mask, masked positions and their labels,
 * and the next-sentence labels, all one micro-batch.
 */
import { Block, ops, tf } from 'poptfjs';
import { dense, encoderLayer, gelu, ipuOfEachLayer, layerNorm, ParameterFactory, truncatedNormal, type Init } from './transformer.js';

/** The sizes of a BERT model. */
export interface BertConfig {
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly layers: number;
  readonly heads: number;
  readonly intermediateSize: number;
  readonly maxPositions: number;
  readonly typeVocabSize: number;
  /** Masked tokens predicted per sequence (Graphcore uses 20 at sequence length 128). */
  readonly maskedTokens: number;
  readonly dropout: number;
}

/** BERT-Base: 12 layers of 768, 110 M parameters. */
export const BERT_BASE: BertConfig = {
  vocabSize: 30522,
  hiddenSize: 768,
  layers: 12,
  heads: 12,
  intermediateSize: 3072,
  maxPositions: 512,
  typeVocabSize: 2,
  maskedTokens: 20,
  dropout: 0.1,
};
/** BERT-Large: 24 layers of 1024, 335 M parameters. */
export const BERT_LARGE: BertConfig = { ...BERT_BASE, hiddenSize: 1024, layers: 24, heads: 16, intermediateSize: 4096 };

/** Where the parts of the model run. */
export interface BertPlacement {
  /** Encoder layers per IPU, in order (IPU i takes the next `layersPerIpu[i]` layers). */
  readonly layersPerIpu: readonly number[];
  /** The IPU of the embeddings (default 0). */
  readonly embeddingIpu?: number;
  /** The IPU of the pre-training heads (default 0, beside the word embedding they share). */
  readonly headIpu?: number;
  /** Hold the weights in float16 (`half`), as Graphcore's examples train BERT. */
  readonly float16?: boolean;
  /** Keep each encoder layer's output as a recomputation checkpoint (`ops.recomputationCheckpoint`), as Graphcore's examples do (default true). */
  readonly checkpointEveryLayer?: boolean;
}

/** The inputs of one micro-batch, in the order the model takes them. */
export function bertInputs(config: BertConfig, microBatch: number, sequenceLength: number): Array<{ shape: number[]; dtype: 'int32' | 'float32' }> {
  return [
    { shape: [microBatch, sequenceLength], dtype: 'int32' }, // token ids
    { shape: [microBatch, sequenceLength], dtype: 'int32' }, // token types
    { shape: [microBatch, sequenceLength], dtype: 'float32' }, // attention mask (1 for tokens, 0 for padding)
    { shape: [microBatch, config.maskedTokens], dtype: 'int32' }, // positions of the masked tokens
    { shape: [microBatch, config.maskedTokens], dtype: 'int32' }, // their true ids
    { shape: [microBatch], dtype: 'int32' }, // next-sentence labels
  ];
}

/** The BERT pre-training model as a function of its six inputs, returning `[nspLogits, loss]`. */
export function bertPretraining(config: BertConfig, placement: BertPlacement, init: Init = truncatedNormal): (...inputs: tf.Tensor[]) => tf.Tensor[] {
  const h = config.hiddenSize;
  const make = new ParameterFactory('bert', init, placement.float16 === true);
  const embeddings = {
    word: make.weight([config.vocabSize, h], 'embeddings/word'),
    position: make.weight([config.maxPositions, h], 'embeddings/position'),
    type: make.weight([config.typeVocabSize, h], 'embeddings/type'),
    norm: make.norm(h, 'embeddings/norm'),
  };
  const layers = Array.from({ length: config.layers }, (_, i) => make.encoderLayer(h, config.intermediateSize, `layer${i}`));
  const heads = {
    pooler: make.dense(h, h, 'pooler'),
    nsp: make.dense(h, 2, 'nsp'),
    transform: make.dense(h, h, 'mlm/transform'),
    transformNorm: make.norm(h, 'mlm/transform_norm'),
    decoderBias: make.zeros([config.vocabSize], 'mlm/bias'),
  };
  const ipuOfLayer = ipuOfEachLayer(placement.layersPerIpu, config.layers);
  const epsilon = 1e-12;
  const dropout = (x: tf.Tensor) => (config.dropout > 0 ? tf.dropout(x, config.dropout) : x);

  return (ids, types, mask, maskedPositions, maskedLabels, nspLabels) => {
    const [batch, sequence] = ids!.shape as [number, number];
    const shape = { batch, sequence, hidden: h, heads: config.heads, dropout: config.dropout, epsilon };
    let [x, maskBias] = Block.run({ userId: 'embeddings', ipuId: placement.embeddingIpu ?? 0 }, () => {
      const positions = tf.range(0, sequence, 1, 'int32');
      const summed = tf.add(tf.add(tf.gather(embeddings.word, ids!), tf.gather(embeddings.type, types!)), tf.gather(embeddings.position, positions));
      // Padding gets a large negative score before the softmax.
      const bias = tf.reshape(tf.mul(tf.sub(1, mask!), -10000), [batch, 1, 1, sequence]);
      return [dropout(layerNorm(tf.reshape(summed, [batch * sequence, h]), embeddings.norm, epsilon)), bias] as [tf.Tensor, tf.Tensor];
    });
    layers.forEach((layer, i) => {
      x = Block.run({ userId: `layer${i}`, ipuId: ipuOfLayer[i]! }, () => {
        const out = encoderLayer(x, layer, shape, maskBias);
        return placement.checkpointEveryLayer === false ? out : ops.recomputationCheckpoint(out);
      });
    });
    return Block.run({ userId: 'heads', ipuId: placement.headIpu ?? 0 }, () => {
      const tokens = tf.reshape(x, [batch, sequence, h]);
      const first = tf.reshape(tf.slice(tokens, [0, 0, 0], [batch, 1, h]), [batch, h]);
      const nspLogits = dense(tf.tanh(dense(first, heads.pooler)), heads.nsp);
      const masked = tf.reshape(tf.gather(tokens, maskedPositions!, 1, 1), [batch * config.maskedTokens, h]);
      const transformed = layerNorm(gelu(dense(masked, heads.transform)), heads.transformNorm, epsilon);
      const mlmLogits = tf.add(tf.matMul(transformed, embeddings.word, false, true), heads.decoderBias);
      const crossEntropy = (logits: tf.Tensor, labels: tf.Tensor, classes: number) =>
        tf.neg(tf.mean(tf.sum(tf.mul(tf.oneHot(tf.reshape(labels, [-1]), classes), tf.logSoftmax(logits)), -1)));
      const loss = tf.add(crossEntropy(mlmLogits, maskedLabels!, config.vocabSize), crossEntropy(nspLogits, nspLabels!, 2));
      return [nspLogits, ops.identityLoss(loss, 'none')];
    });
  };
}
