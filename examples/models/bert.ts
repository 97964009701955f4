/**
 * BERT as tfjs function models, with the layer sizes of BERT-Base and
 * BERT-Large, their parts placed on IPUs the way Graphcore's BERT examples
 * place them: the embeddings and the first encoder layers on IPU 0, the other
 * layers spread over the next IPUs, then the head.
 *
 * - Pre-training (masked language model and next-sentence prediction): the
 *   heads, which share the word embedding, back on IPU 0. Its inputs are the
 *   token ids, token types, attention mask, masked positions and their
 *   labels, and the next-sentence labels.
 * - Question answering (SQuAD fine-tuning, Hugging Face's
 *   `BertForQuestionAnswering`): a start and an end score per token from one
 *   dense layer on the last IPU. Its inputs are the token ids, token types,
 *   attention mask and the answer's start and end positions.
 *
 * Each model computes its own loss (`ops.identityLoss`) from one micro-batch
 * of its inputs.
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
  /** Dropout on the embeddings and the residual branches (and on the attention probabilities unless {@link attentionDropout} is given). */
  readonly dropout: number;
  /** Dropout on the attention probabilities (default: {@link dropout}). */
  readonly attentionDropout?: number;
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

/** The embeddings and encoder layers of a BERT model, made once. */
interface BertBody {
  readonly make: ParameterFactory;
  readonly wordEmbedding: tf.Variable;
  /** Runs the embeddings and the encoder layers on one micro-batch: the last layer's output, `[batch × sequence, hidden]`. */
  encode(ids: tf.Tensor, types: tf.Tensor, mask: tf.Tensor): tf.Tensor;
}

/** The embeddings (on `placement.embeddingIpu`) and the encoder layers (placed by `placement.layersPerIpu`), each layer a block. */
function bertBody(config: BertConfig, placement: BertPlacement, init: Init, epsilon: number): BertBody {
  const h = config.hiddenSize;
  const make = new ParameterFactory('bert', init, placement.float16 === true);
  const embeddings = {
    word: make.weight([config.vocabSize, h], 'embeddings/word'),
    position: make.weight([config.maxPositions, h], 'embeddings/position'),
    type: make.weight([config.typeVocabSize, h], 'embeddings/type'),
    norm: make.norm(h, 'embeddings/norm'),
  };
  const layers = Array.from({ length: config.layers }, (_, i) => make.encoderLayer(h, config.intermediateSize, `layer${i}`));
  const ipuOfLayer = ipuOfEachLayer(placement.layersPerIpu, config.layers);
  const dropout = (x: tf.Tensor) => (config.dropout > 0 ? tf.dropout(x, config.dropout) : x);
  const encode = (ids: tf.Tensor, types: tf.Tensor, mask: tf.Tensor): tf.Tensor => {
    const [batch, sequence] = ids.shape as [number, number];
    const shape = {
      batch,
      sequence,
      hidden: h,
      heads: config.heads,
      dropout: config.dropout,
      ...(config.attentionDropout === undefined ? {} : { attentionDropout: config.attentionDropout }),
      epsilon,
    };
    let [x, maskBias] = Block.run({ userId: 'embeddings', ipuId: placement.embeddingIpu ?? 0 }, () => {
      const positions = tf.range(0, sequence, 1, 'int32');
      const summed = tf.add(tf.add(tf.gather(embeddings.word, ids), tf.gather(embeddings.type, types)), tf.gather(embeddings.position, positions));
      // Padding gets a large negative score before the softmax.
      const bias = tf.reshape(tf.mul(tf.sub(1, mask), -10000), [batch, 1, 1, sequence]);
      return [dropout(layerNorm(tf.reshape(summed, [batch * sequence, h]), embeddings.norm, epsilon)), bias] as [tf.Tensor, tf.Tensor];
    });
    layers.forEach((layer, i) => {
      x = Block.run({ userId: `layer${i}`, ipuId: ipuOfLayer[i]! }, () => {
        const out = encoderLayer(x, layer, shape, maskBias);
        return placement.checkpointEveryLayer === false ? out : ops.recomputationCheckpoint(out);
      });
    });
    return x;
  };
  return { make, wordEmbedding: embeddings.word, encode };
}

/** Softmax cross-entropy of `logits` `[n, classes]` against integer `labels`, averaged over the `n` rows. */
function crossEntropy(logits: tf.Tensor, labels: tf.Tensor, classes: number): tf.Tensor {
  return tf.neg(tf.mean(tf.sum(tf.mul(tf.oneHot(tf.reshape(labels, [-1]), classes), tf.logSoftmax(logits)), -1)));
}

/** The BERT pre-training model as a function of its six inputs, returning `[nspLogits, loss]`. */
export function bertPretraining(config: BertConfig, placement: BertPlacement, init: Init = truncatedNormal): (...inputs: tf.Tensor[]) => tf.Tensor[] {
  const h = config.hiddenSize;
  const epsilon = 1e-12;
  const body = bertBody(config, placement, init, epsilon);
  const heads = {
    pooler: body.make.dense(h, h, 'pooler'),
    nsp: body.make.dense(h, 2, 'nsp'),
    transform: body.make.dense(h, h, 'mlm/transform'),
    transformNorm: body.make.norm(h, 'mlm/transform_norm'),
    decoderBias: body.make.zeros([config.vocabSize], 'mlm/bias'),
  };

  return (ids, types, mask, maskedPositions, maskedLabels, nspLabels) => {
    const [batch, sequence] = ids!.shape as [number, number];
    const x = body.encode(ids!, types!, mask!);
    return Block.run({ userId: 'heads', ipuId: placement.headIpu ?? 0 }, () => {
      const tokens = tf.reshape(x, [batch, sequence, h]);
      const first = tf.reshape(tf.slice(tokens, [0, 0, 0], [batch, 1, h]), [batch, h]);
      const nspLogits = dense(tf.tanh(dense(first, heads.pooler)), heads.nsp);
      const masked = tf.reshape(tf.gather(tokens, maskedPositions!, 1, 1), [batch * config.maskedTokens, h]);
      const transformed = layerNorm(gelu(dense(masked, heads.transform)), heads.transformNorm, epsilon);
      const mlmLogits = tf.add(tf.matMul(transformed, body.wordEmbedding, false, true), heads.decoderBias);
      const loss = tf.add(crossEntropy(mlmLogits, maskedLabels!, config.vocabSize), crossEntropy(nspLogits, nspLabels!, 2));
      return [nspLogits, ops.identityLoss(loss, 'none')];
    });
  };
}

/** The inputs of one micro-batch of question answering, in the order the model takes them. */
export function bertQuestionAnsweringInputs(microBatch: number, sequenceLength: number): Array<{ shape: number[]; dtype: 'int32' | 'float32' }> {
  return [
    { shape: [microBatch, sequenceLength], dtype: 'int32' }, // token ids
    { shape: [microBatch, sequenceLength], dtype: 'int32' }, // token types
    { shape: [microBatch, sequenceLength], dtype: 'float32' }, // attention mask (1 for tokens, 0 for padding)
    { shape: [microBatch], dtype: 'int32' }, // the answer's first token
    { shape: [microBatch], dtype: 'int32' }, // the answer's last token
  ];
}

/**
 * BERT for question answering (SQuAD) as a function of its five inputs, returning `[startLogits, loss]`: a start and
 * an end score for every token from one dense layer (Hugging Face's `qa_outputs`) on the last IPU of
 * `placement.layersPerIpu`, and the mean of the two positions' cross-entropies, as `BertForQuestionAnswering` computes it.
 */
export function bertQuestionAnswering(config: BertConfig, placement: BertPlacement, init: Init = truncatedNormal): (...inputs: tf.Tensor[]) => tf.Tensor[] {
  const h = config.hiddenSize;
  const body = bertBody(config, placement, init, 1e-12);
  const answer = body.make.dense(h, 2, 'qa_outputs');

  return (ids, types, mask, startPositions, endPositions) => {
    const [batch, sequence] = ids!.shape as [number, number];
    const x = body.encode(ids!, types!, mask!);
    return Block.run({ userId: 'qa_outputs', ipuId: placement.headIpu ?? placement.layersPerIpu.length - 1 }, () => {
      const [start, end] = tf.split(tf.reshape(dense(x, answer), [batch, sequence, 2]), 2, 2).map((scores) => tf.reshape(scores, [batch, sequence]));
      const loss = tf.div(tf.add(crossEntropy(start!, startPositions!, sequence), crossEntropy(end!, endPositions!, sequence)), 2);
      return [start!, ops.identityLoss(loss, 'none')];
    });
  };
}
