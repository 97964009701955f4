/**
 * Recognising random tensors while tracing.
 *
 * tfjs creates random tensors (`randomUniform`, `randomNormal`,
 * `truncatedNormal`, and so dropout masks) in JavaScript, without a kernel, so
 * a trace sees only their values. A traced model must draw fresh randomness on
 * every run, so the tracer recognises these tensors by the op scope they were
 * made in and recovers the distribution's parameters: an unseeded tfjs random
 * op seeds its generator from `Math.random()`, so regenerating the standard
 * distribution from the same seed and fitting `value = offset + scale * standard`
 * gives the parameters exactly.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { isRandomDraw, RANDOM_KERNELS } from '../backend/kernel_catalogue/kernel_catalogue.js';
import type { AttrValue, Node } from '../ir/graph.js';

/** True for a random draw traced with shapes only: its distribution's parameters are unknown, so it cannot run. */
export function lacksDistribution(node: Node): boolean {
  return isRandomDraw(node.kernel) && !('minval' in node.attrs || 'mean' in node.attrs);
}

/** A random pseudo-kernel name (the kernel catalogue's random draws). */
export type RandomKernel = (typeof RANDOM_KERNELS)[keyof typeof RANDOM_KERNELS];

/** A recognised random tensor: its pseudo-kernel and attributes. */
export interface RandomSpec {
  kernel: RandomKernel;
  attrs: Record<string, AttrValue>;
}

const OP_SUFFIX = '__op';

/** tfjs random ops, by the name of the engine scope they run in. */
const RANDOM_OP_SCOPES: Record<string, keyof typeof RANDOM_KERNELS | 'unsupported'> = {
  [`randomUniform${OP_SUFFIX}`]: 'randomUniform',
  [`randomNormal${OP_SUFFIX}`]: 'randomNormal',
  [`randomStandardNormal${OP_SUFFIX}`]: 'randomNormal',
  [`truncatedNormal${OP_SUFFIX}`]: 'truncatedNormal',
  [`randomGamma${OP_SUFFIX}`]: 'unsupported',
  [`randomUniformInt${OP_SUFFIX}`]: 'unsupported',
};

/** True if an engine scope of this name creates random tensors. */
export function isRandomOpScope(scopeName: string | undefined): boolean {
  return scopeName !== undefined && scopeName in RANDOM_OP_SCOPES;
}

function standardSample(kind: keyof typeof RANDOM_KERNELS, shape: number[], seed: number): Float32Array {
  const t =
    kind === 'randomUniform'
      ? tf.randomUniform(shape, 0, 1, 'float32', seed)
      : kind === 'randomNormal'
        ? tf.randomNormal(shape, 0, 1, 'float32', seed)
        : tf.truncatedNormal(shape, 0, 1, 'float32', seed);
  const data = t.dataSync() as Float32Array;
  t.dispose();
  return data;
}

/** Fits `values = offset + scale * standard` and checks every element. */
function fitAffine(standard: Float32Array, values: Float32Array): { offset: number; scale: number } | undefined {
  if (values.length === 0) return { offset: 0, scale: 1 };
  let lo = 0;
  let hi = 0;
  for (let i = 1; i < standard.length; i++) {
    if (standard[i]! < standard[lo]!) lo = i;
    if (standard[i]! > standard[hi]!) hi = i;
  }
  let scale: number;
  let offset: number;
  if (standard[hi] === standard[lo]) {
    scale = 1;
    offset = values[0]! - standard[0]!;
  } else {
    scale = (values[hi]! - values[lo]!) / (standard[hi]! - standard[lo]!);
    offset = values[lo]! - scale * standard[lo]!;
  }
  const snap = (x: number) => (Math.abs(x - Math.round(x)) < 1e-6 ? Math.round(x) : Math.fround(x));
  scale = snap(scale);
  offset = snap(offset);
  for (let i = 0; i < values.length; i++) {
    const expected = offset + scale * standard[i]!;
    if (Math.abs(expected - values[i]!) > 1e-5 * (1 + Math.abs(values[i]!))) return undefined;
  }
  return { offset, scale };
}

/**
 * Describes a tensor made in random op scope `scopeName` from the unseeded
 * generator seeded with `seed`, so it can be redrawn on every run, from its
 * values. Without values (a trace with shapes only, where draws are not
 * computed) the draw is described by its shape only.
 */
export function describeRandomTensor(scopeName: string, seed: number, tensor: tf.Tensor, values: Float32Array | undefined): RandomSpec {
  const kind = RANDOM_OP_SCOPES[scopeName];
  const op = scopeName.slice(0, -OP_SUFFIX.length);
  if (kind === undefined || kind === 'unsupported' || tensor.dtype !== 'float32') {
    throw new PoptfjsError(
      `the model draws random numbers with tf.${op} (dtype ${tensor.dtype}), which poptfjs cannot redraw on each run; ` +
        'use tf.randomUniform, tf.randomNormal or tf.truncatedNormal with dtype float32, or pass a seed to make the values constant',
      { type: 'trace', location: op },
    );
  }
  if (values === undefined) return { kernel: RANDOM_KERNELS[kind], attrs: { shape: tensor.shape } };
  const fit = fitAffine(standardSample(kind, tensor.shape, seed), values);
  if (!fit) {
    throw new PoptfjsError(`could not recognise the distribution of a tensor drawn by tf.${op} while tracing`, {
      type: 'trace',
      location: op,
    });
  }
  const kernel = RANDOM_KERNELS[kind];
  const attrs: Record<string, AttrValue> =
    kind === 'randomUniform' ? { shape: tensor.shape, minval: fit.offset, maxval: fit.offset + fit.scale } : { shape: tensor.shape, mean: fit.offset, stddev: fit.scale };
  return { kernel, attrs };
}
