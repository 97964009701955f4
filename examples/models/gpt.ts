/**
 * A GPT-style decoder (GPT-2 and GPT-3's architecture) trained as a language
 * model, written as a tfjs function model the way a user writes one: weights
 * drawn with `tf.randomNormal`, biases and norms from `tf.zeros` and
 * `tf.ones`, pre-norm decoder layers with causal self-attention, the output
 * projection tied to the token embedding. Each layer is a block on the IPU
 * `ipus` spreads it over; the embeddings and the tied output projection are
 * on IPU 0. The model computes its own loss (`ops.identityLoss`): the mean
 * cross-entropy of each next token.
 */
import { Block, ops, tf } from 'poptfjs';
import { dense, gelu, layerNorm, ParameterFactory, type DenseWeights, type NormWeights } from './transformer.js';

/** The sizes of a GPT model. */
export interface GptConfig {
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly layers: number;
  readonly heads: number;
  /** The longest sequence, and the number of learned positions. */
  readonly maxPositions: number;
  readonly dropout: number;
}

/** GPT-3 175B (Brown et al. 2020, table 2.1: 96 layers of 12288, 96 heads of 128, context 2048; GPT-2's 50257 tokens). */
export const GPT3_175B: GptConfig = { vocabSize: 50257, hiddenSize: 12288, layers: 96, heads: 96, maxPositions: 2048, dropout: 0.1 };

/** A GPT decoder of width 2048 and 32000 tokens with `layers` layers (16 heads of 128, context 512). */
export function gptOfWidth2048(layers: number): GptConfig {
  return { vocabSize: 32000, hiddenSize: 2048, layers, heads: 16, maxPositions: 512, dropout: 0.1 };
}

/** The parameters of one decoder layer. */
interface DecoderLayerWeights {
  readonly attentionNorm: NormWeights;
  readonly qkv: DenseWeights;
  readonly projection: DenseWeights;
  readonly mlpNorm: NormWeights;
  readonly expand: DenseWeights;
  readonly contract: DenseWeights;
}

/** The inputs of one micro-batch: token ids, and the id of the token after each. */
export function gptInputs(microBatch: number, sequence: number): Array<{ shape: number[]; dtype: 'int32' }> {
  return [
    { shape: [microBatch, sequence], dtype: 'int32' },
    { shape: [microBatch, sequence], dtype: 'int32' },
  ];
}

/** The IPU of each of `layers` layers spread evenly, in order, over `ipus` IPUs. */
export function spreadOver(ipus: number, layers: number): number[] {
  return Array.from({ length: layers }, (_, i) => Math.floor((i * ipus) / layers));
}

/** The language model as a function of `(tokens, nextTokens)`, returning `[loss]`. */
export function gptLanguageModel(config: GptConfig, ipus: number): (tokens: tf.Tensor, nextTokens: tf.Tensor) => tf.Tensor[] {
  const h = config.hiddenSize;
  const make = new ParameterFactory('gpt', (shape) => tf.randomNormal(shape, 0, 0.02), false);
  const embeddings = { tokens: make.weight([config.vocabSize, h], 'wte'), positions: make.weight([config.maxPositions, h], 'wpe') };
  const layers: DecoderLayerWeights[] = Array.from({ length: config.layers }, (_, i) => ({
    attentionNorm: make.norm(h, `h${i}/ln_1`),
    qkv: make.dense(h, 3 * h, `h${i}/attn/c_attn`),
    projection: make.dense(h, h, `h${i}/attn/c_proj`),
    mlpNorm: make.norm(h, `h${i}/ln_2`),
    expand: make.dense(h, 4 * h, `h${i}/mlp/c_fc`),
    contract: make.dense(4 * h, h, `h${i}/mlp/c_proj`),
  }));
  const finalNorm = make.norm(h, 'ln_f');
  const ipuOfLayer = spreadOver(ipus, config.layers);
  const epsilon = 1e-5;
  const dropout = (x: tf.Tensor) => (config.dropout > 0 ? tf.dropout(x, config.dropout) : x);

  return (tokens, nextTokens) => {
    const [batch, sequence] = tokens.shape as [number, number];
    const heads = config.heads;
    const dh = h / heads;
    const perHead = (t: tf.Tensor) => tf.transpose(tf.reshape(t, [batch, sequence, heads, dh]), [0, 2, 1, 3]);
    let [x, causalBias] = Block.run({ userId: 'embeddings', ipuId: 0 }, () => {
      const positions = tf.range(0, sequence, 1, 'int32');
      const embedded = tf.add(tf.gather(embeddings.tokens, tokens), tf.gather(embeddings.positions, positions));
      // Each token sees itself and the tokens before it: the others get a large negative score before the softmax.
      const seen = tf.greaterEqual(tf.expandDims(positions, 1), tf.expandDims(positions, 0));
      const bias = tf.mul(tf.sub(1, tf.cast(seen, 'float32')), -1e9);
      return [dropout(tf.reshape(embedded, [batch * sequence, h])), bias] as [tf.Tensor, tf.Tensor];
    });
    layers.forEach((w, i) => {
      x = Block.run({ userId: `layer${i}`, ipuId: ipuOfLayer[i]! }, () => {
        const [q, k, v] = tf.split(dense(layerNorm(x, w.attentionNorm, epsilon), w.qkv), 3, 1).map(perHead) as [tf.Tensor, tf.Tensor, tf.Tensor];
        const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(dh)), causalBias);
        const context = tf.matMul(dropout(tf.softmax(scores)), v);
        const attended = tf.add(x, dropout(dense(tf.reshape(tf.transpose(context, [0, 2, 1, 3]), [batch * sequence, h]), w.projection)));
        const mlp = dense(gelu(dense(layerNorm(attended, w.mlpNorm, epsilon), w.expand)), w.contract);
        return ops.recomputationCheckpoint(tf.add(attended, dropout(mlp)));
      });
    });
    return Block.run({ userId: 'head', ipuId: 0 }, () => {
      const logits = tf.matMul(layerNorm(x, finalNorm, epsilon), embeddings.tokens, false, true);
      const crossEntropy = tf.neg(tf.mean(tf.sum(tf.mul(tf.oneHot(tf.reshape(nextTokens, [-1]), config.vocabSize), tf.logSoftmax(logits)), -1)));
      return [ops.identityLoss(crossEntropy, 'none')];
    });
  };
}
