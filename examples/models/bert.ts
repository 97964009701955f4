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
import { Block, half, ops, tf } from 'poptfjs';

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
export const BERT_BASE: BertConfig = { vocabSize: 30522, hiddenSize: 768, layers: 12, heads: 12, intermediateSize: 3072, maxPositions: 512, typeVocabSize: 2, maskedTokens: 20, dropout: 0.1 };
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

type Init = (shape: number[]) => tf.Tensor;

const normal: Init = (shape) => tf.truncatedNormal(shape, 0, 0.02);

/** The BERT pre-training model as a function of its six inputs, returning `[nspLogits, loss]`. */
export function bertPretraining(config: BertConfig, placement: BertPlacement, init: Init = normal): (...inputs: tf.Tensor[]) => tf.Tensor[] {
  const h = config.hiddenSize;
  let count = 0;
  const variable = (value: tf.Tensor, name: string) => {
    const v = tf.variable(value, true, `bert/${name}_${count++}`);
    value.dispose();
    return placement.float16 ? half(v) : v;
  };
  const weight = (shape: number[], name: string) => variable(init(shape), name);
  const zeros = (shape: number[], name: string) => variable(tf.zeros(shape), name);
  const ones = (shape: number[], name: string) => variable(tf.ones(shape), name);
  const layerNorm = (name: string) => ({ gamma: ones([h], `${name}/gamma`), beta: zeros([h], `${name}/beta`) });
  const dense = (inputs: number, outputs: number, name: string) => ({ kernel: weight([inputs, outputs], `${name}/kernel`), bias: zeros([outputs], `${name}/bias`) });

  const embeddings = {
    word: weight([config.vocabSize, h], 'embeddings/word'),
    position: weight([config.maxPositions, h], 'embeddings/position'),
    type: weight([config.typeVocabSize, h], 'embeddings/type'),
    norm: layerNorm('embeddings/norm'),
  };
  const layers = Array.from({ length: config.layers }, (_, i) => ({
    qkv: dense(h, 3 * h, `layer${i}/qkv`),
    output: dense(h, h, `layer${i}/attention_output`),
    attentionNorm: layerNorm(`layer${i}/attention_norm`),
    intermediate: dense(h, config.intermediateSize, `layer${i}/intermediate`),
    ffnOutput: dense(config.intermediateSize, h, `layer${i}/ffn_output`),
    ffnNorm: layerNorm(`layer${i}/ffn_norm`),
  }));
  const heads = {
    pooler: dense(h, h, 'pooler'),
    nsp: dense(h, 2, 'nsp'),
    transform: dense(h, h, 'mlm/transform'),
    transformNorm: layerNorm('mlm/transform_norm'),
    decoderBias: zeros([config.vocabSize], 'mlm/bias'),
  };
  const ipuOfLayer = placement.layersPerIpu.flatMap((n, ipu) => new Array<number>(n).fill(ipu));
  if (ipuOfLayer.length !== config.layers) {
    throw new RangeError(`layersPerIpu [${placement.layersPerIpu.join(', ')}] places ${ipuOfLayer.length} layers, but the model has ${config.layers}`);
  }

  const applyDense = (x: tf.Tensor, d: { kernel: tf.Variable; bias: tf.Variable }) => tf.add(tf.matMul(x, d.kernel), d.bias);
  const normalize = (x: tf.Tensor, n: { gamma: tf.Variable; beta: tf.Variable }) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, 1e-12))), n.gamma), n.beta);
  };
  const gelu = (x: tf.Tensor) => tf.mul(tf.mul(x, 0.5), tf.add(tf.erf(tf.mul(x, Math.SQRT1_2)), 1));
  const dropout = (x: tf.Tensor) => (config.dropout > 0 ? tf.dropout(x, config.dropout) : x);

  return (ids, types, mask, maskedPositions, maskedLabels, nspLabels) => {
    const [batch, sequence] = ids!.shape as [number, number];
    const dh = h / config.heads;
    let [x, maskBias] = Block.run({ userId: 'embeddings', ipuId: placement.embeddingIpu ?? 0 }, () => {
      const positions = tf.range(0, sequence, 1, 'int32');
      const summed = tf.add(tf.add(tf.gather(embeddings.word, ids!), tf.gather(embeddings.type, types!)), tf.gather(embeddings.position, positions));
      // Padding gets a large negative score before the softmax.
      const bias = tf.reshape(tf.mul(tf.sub(1, mask!), -10000), [batch, 1, 1, sequence]);
      return [dropout(normalize(tf.reshape(summed, [batch * sequence, h]), embeddings.norm)), bias] as [tf.Tensor, tf.Tensor];
    });
    layers.forEach((layer, i) => {
      x = Block.run({ userId: `layer${i}`, ipuId: ipuOfLayer[i]! }, () => {
        const heads4d = (t: tf.Tensor) => tf.transpose(tf.reshape(t, [batch, sequence, config.heads, dh]), [0, 2, 1, 3]);
        const [q, k, v] = tf.split(applyDense(x, layer.qkv), 3, 1).map(heads4d) as [tf.Tensor, tf.Tensor, tf.Tensor];
        const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(dh)), maskBias);
        const context = tf.matMul(dropout(tf.softmax(scores)), v);
        const attention = applyDense(tf.reshape(tf.transpose(context, [0, 2, 1, 3]), [batch * sequence, h]), layer.output);
        const attended = normalize(tf.add(x, dropout(attention)), layer.attentionNorm);
        const ffn = applyDense(gelu(applyDense(attended, layer.intermediate)), layer.ffnOutput);
        const out = normalize(tf.add(attended, dropout(ffn)), layer.ffnNorm);
        return placement.checkpointEveryLayer === false ? out : ops.recomputationCheckpoint(out);
      });
    });
    return Block.run({ userId: 'heads', ipuId: placement.headIpu ?? 0 }, () => {
      const tokens = tf.reshape(x, [batch, sequence, h]);
      const first = tf.reshape(tf.slice(tokens, [0, 0, 0], [batch, 1, h]), [batch, h]);
      const nspLogits = applyDense(tf.tanh(applyDense(first, heads.pooler)), heads.nsp);
      const masked = tf.reshape(tf.gather(tokens, maskedPositions!, 1, 1), [batch * config.maskedTokens, h]);
      const transformed = normalize(gelu(applyDense(masked, heads.transform)), heads.transformNorm);
      const mlmLogits = tf.add(tf.matMul(transformed, embeddings.word, false, true), heads.decoderBias);
      const crossEntropy = (logits: tf.Tensor, labels: tf.Tensor, classes: number) =>
        tf.neg(tf.mean(tf.sum(tf.mul(tf.oneHot(tf.reshape(labels, [-1]), classes), tf.logSoftmax(logits)), -1)));
      const loss = tf.add(crossEntropy(mlmLogits, maskedLabels!, config.vocabSize), crossEntropy(nspLogits, nspLabels!, 2));
      return [nspLogits, ops.identityLoss(loss, 'none')];
    });
  };
}
