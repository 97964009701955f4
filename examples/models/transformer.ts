/**
 * The pieces of a transformer encoder as tfjs functions over tf.Variables:
 * dense and layer-norm parameters, GELU, multi-head attention, and the
 * encoder layer (self attention and feed-forward, post-norm, as BERT uses
 * it). BERT, GPT and ViT in this folder are made of them.
 */
import { half, tf } from 'poptfjs';

/** Initial values of a weight of `shape`. */
export type Init = (shape: number[]) => tf.Tensor;

/** BERT's and ViT's initializer: a truncated normal of standard deviation 0.02. */
export const truncatedNormal: Init = (shape) => tf.truncatedNormal(shape, 0, 0.02);

/** A dense layer's parameters. */
export interface DenseWeights {
  readonly kernel: tf.Variable;
  readonly bias: tf.Variable;
}

/** A layer norm's parameters. */
export interface NormWeights {
  readonly gamma: tf.Variable;
  readonly beta: tf.Variable;
}

/** The parameters of one encoder layer. */
export interface EncoderLayerWeights {
  readonly qkv: DenseWeights;
  readonly output: DenseWeights;
  readonly attentionNorm: NormWeights;
  readonly intermediate: DenseWeights;
  readonly ffnOutput: DenseWeights;
  readonly ffnNorm: NormWeights;
}

/** Makes named variables, in float16 if asked. */
export class ParameterFactory {
  #count = 0;

  constructor(
    private readonly prefix: string,
    private readonly init: Init,
    private readonly float16: boolean,
  ) {}

  /** A variable holding `value` (which it disposes). */
  variable(value: tf.Tensor, name: string): tf.Variable {
    const v = tf.variable(value, true, `${this.prefix}/${name}_${this.#count++}`);
    value.dispose();
    return this.float16 ? half(v) : v;
  }

  /** A weight with the factory's initial values. */
  weight(shape: number[], name: string): tf.Variable {
    return this.variable(this.init(shape), name);
  }

  /** A variable of zeros. */
  zeros(shape: number[], name: string): tf.Variable {
    return this.variable(tf.zeros(shape), name);
  }

  /** A dense layer from `inputs` to `outputs` features. */
  dense(inputs: number, outputs: number, name: string): DenseWeights {
    return { kernel: this.weight([inputs, outputs], `${name}/kernel`), bias: this.zeros([outputs], `${name}/bias`) };
  }

  /** A layer norm over `features`. */
  norm(features: number, name: string): NormWeights {
    return { gamma: this.variable(tf.ones([features]), `${name}/gamma`), beta: this.zeros([features], `${name}/beta`) };
  }

  /** An encoder layer of width `hidden` and feed-forward width `intermediate`. */
  encoderLayer(hidden: number, intermediate: number, name: string): EncoderLayerWeights {
    return {
      qkv: this.dense(hidden, 3 * hidden, `${name}/qkv`),
      output: this.dense(hidden, hidden, `${name}/attention_output`),
      attentionNorm: this.norm(hidden, `${name}/attention_norm`),
      intermediate: this.dense(hidden, intermediate, `${name}/intermediate`),
      ffnOutput: this.dense(intermediate, hidden, `${name}/ffn_output`),
      ffnNorm: this.norm(hidden, `${name}/ffn_norm`),
    };
  }
}

/** `x · kernel + bias`. */
export function dense(x: tf.Tensor, d: DenseWeights): tf.Tensor {
  return tf.add(tf.matMul(x, d.kernel), d.bias);
}

/** Layer normalization over the last axis. */
export function layerNorm(x: tf.Tensor, n: NormWeights, epsilon: number): tf.Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, epsilon))), n.gamma), n.beta);
}

/** GELU with erf, as BERT defines it. */
export function gelu(x: tf.Tensor): tf.Tensor {
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.erf(tf.mul(x, Math.SQRT1_2)), 1));
}

/** The shape of the encoder's input: `batch` sequences of `sequence` tokens, flattened to `[batch · sequence, hidden]`. */
export interface EncoderShape {
  readonly batch: number;
  readonly sequence: number;
  readonly hidden: number;
  readonly heads: number;
  /** Dropout on the residual branches (and on the attention probabilities unless {@link attentionDropout} is given). */
  readonly dropout: number;
  /** Dropout on the attention probabilities (default: {@link dropout}). */
  readonly attentionDropout?: number;
  readonly epsilon: number;
}

/**
 * Multi-head scaled dot-product attention of the queries, keys and values
 * `q`, `k`, `v` (each `[batch · sequence, hidden]`, the heads side by side),
 * with an optional additive mask (`[batch, 1, 1, sequence]`) and dropout of
 * `probabilityDropout` on the attention probabilities: the heads' contexts,
 * `[batch · sequence, hidden]`.
 */
export function attentionContext(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, shape: EncoderShape, probabilityDropout: number, maskBias?: tf.Tensor): tf.Tensor {
  const { batch, sequence, hidden, heads } = shape;
  const dh = hidden / heads;
  const perHead = (t: tf.Tensor) => tf.transpose(tf.reshape(t, [batch, sequence, heads, dh]), [0, 2, 1, 3]);
  const scaled = tf.mul(tf.matMul(perHead(q), perHead(k), false, true), 1 / Math.sqrt(dh));
  const scores = maskBias ? tf.add(scaled, maskBias) : scaled;
  const probabilities = probabilityDropout > 0 ? tf.dropout(tf.softmax(scores), probabilityDropout) : tf.softmax(scores);
  const context = tf.matMul(probabilities, perHead(v));
  return tf.reshape(tf.transpose(context, [0, 2, 1, 3]), [batch * sequence, hidden]);
}

/**
 * One encoder layer on `x` (`[batch · sequence, hidden]`): multi-head self
 * attention with an optional additive mask (`[batch, 1, 1, sequence]`),
 * then the feed-forward network, each with a residual and a layer norm.
 */
export function encoderLayer(x: tf.Tensor, w: EncoderLayerWeights, shape: EncoderShape, maskBias?: tf.Tensor): tf.Tensor {
  const dropout = (t: tf.Tensor) => (shape.dropout > 0 ? tf.dropout(t, shape.dropout) : t);
  const [q, k, v] = tf.split(dense(x, w.qkv), 3, 1) as [tf.Tensor, tf.Tensor, tf.Tensor];
  const attention = dense(attentionContext(q, k, v, shape, shape.attentionDropout ?? shape.dropout, maskBias), w.output);
  const attended = layerNorm(tf.add(x, dropout(attention)), w.attentionNorm, shape.epsilon);
  const ffn = dense(gelu(dense(attended, w.intermediate)), w.ffnOutput);
  return layerNorm(tf.add(attended, dropout(ffn)), w.ffnNorm, shape.epsilon);
}

/** The IPU of each of `layers` layers from layers per IPU; an error if they do not add up. */
export function ipuOfEachLayer(layersPerIpu: readonly number[], layers: number): number[] {
  const ipus = layersPerIpu.flatMap((n, ipu) => new Array<number>(n).fill(ipu));
  if (ipus.length !== layers) throw new RangeError(`layersPerIpu [${layersPerIpu.join(', ')}] places ${ipus.length} layers, but the model has ${layers}`);
  return ipus;
}
