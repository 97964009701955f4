/**
 * Discrete Fourier transforms (opset 17): DFT along one axis (forward or
 * inverse, optionally one-sided) and STFT (framed, windowed, one-sided by
 * default). Complex tensors have a last axis of 2 (real, imaginary); real
 * inputs a last axis of 1.
 *
 * Transforms are matrix products with cosine and sine matrices computed on
 * the host from the lengths known at import.
 */
import * as tf from '@tensorflow/tfjs';
import { hostNumbers } from '../proto/host_tensor.js';
import { normalizeAxis } from './axes.js';
import type { OperatorFamily, OperatorImplementation } from './operator.js';

/**
 * The DFT of the complex signal (re, im) along its last axis, of `length`
 * points (zero-padded or truncated), keeping `bins` frequencies; [re, im].
 */
function transformLastAxis(re: tf.Tensor, im: tf.Tensor | undefined, length: number, bins: number, inverse: boolean): [tf.Tensor, tf.Tensor] {
  const fitToLength = (t: tf.Tensor) => {
    const n = t.shape[t.rank - 1]!;
    if (n === length) return t;
    if (n > length)
      return tf.slice(
        t,
        t.shape.map(() => 0),
        [...t.shape.slice(0, -1), length],
      );
    return tf.pad(
      t,
      t.shape.map((_, i) => [0, i === t.rank - 1 ? length - n : 0] as [number, number]),
    );
  };
  const angle = (j: number, k: number) => (2 * Math.PI * ((j * k) % length)) / length;
  const cos = tf.tensor2d(
    Float32Array.from({ length: length * bins }, (_, i) => Math.cos(angle(Math.floor(i / bins), i % bins))),
    [length, bins],
  );
  const sin = tf.tensor2d(
    Float32Array.from({ length: length * bins }, (_, i) => Math.sin(angle(Math.floor(i / bins), i % bins))),
    [length, bins],
  );
  const batchShape = re.shape.slice(0, -1);
  const product = (t: tf.Tensor, m: tf.Tensor) => tf.reshape(tf.matMul(tf.reshape(fitToLength(t), [-1, length]), m), [...batchShape, bins]);
  // Forward: X_k = sum_j x_j e^{-2 pi i jk / n}; inverse: e^{+2 pi i jk / n} / n.
  const sign = inverse ? 1 : -1;
  let outRe = product(re, cos);
  let outIm = tf.mul(product(re, sin), sign);
  if (im) {
    outRe = tf.sub(outRe, tf.mul(product(im, sin), sign));
    outIm = tf.add(outIm, product(im, cos));
  }
  return inverse ? [tf.div(outRe, length), tf.div(outIm, length)] : [outRe, outIm];
}

/** Real and imaginary parts of a tensor whose last axis is 1 (real) or 2 (complex); the imaginary part undefined for real. */
function complexParts(x: tf.Tensor): [tf.Tensor, tf.Tensor | undefined] {
  if (x.shape[x.rank - 1] === 1) return [tf.squeeze(x, [x.rank - 1]), undefined];
  const [re, im] = tf.unstack(x, x.rank - 1) as [tf.Tensor, tf.Tensor];
  return [re, im];
}

const dft: OperatorImplementation = (call) => {
  const x = call.input(0);
  const axis = normalizeAxis(call.attrs.int('axis', 1), x.rank - 1, call.where);
  const length = call.hasInput(1) ? hostNumbers(call.constantInput(1))[0]! : x.shape[axis]!;
  const inverse = call.attrs.int('inverse', 0) === 1;
  const bins = call.attrs.int('onesided', 0) === 1 ? Math.floor(length / 2) + 1 : length;
  const [re, im] = complexParts(x);
  const last = re.rank - 1;
  const perm = Array.from({ length: re.rank }, (_, i) => (i === axis ? last : i === last ? axis : i));
  const moved = (t: tf.Tensor) => (axis === last ? t : tf.transpose(t, perm));
  const [outRe, outIm] = transformLastAxis(moved(re), im && moved(im), length, bins, inverse);
  return [tf.stack([moved(outRe), moved(outIm)], x.rank - 1)];
};

const stft: OperatorImplementation = (call) => {
  const signal = call.input(0);
  const step = hostNumbers(call.constantInput(1))[0]!;
  const window = call.optionalInput(2);
  const frameLength = call.hasInput(3) ? hostNumbers(call.constantInput(3))[0]! : window!.shape[0]!;
  const length = signal.shape[1]!;
  const frames = Math.floor((length - frameLength) / step) + 1;
  const bins = call.attrs.int('onesided', 1) === 1 ? Math.floor(frameLength / 2) + 1 : frameLength;
  const starts = Int32Array.from({ length: frames * frameLength }, (_, i) => Math.floor(i / frameLength) * step + (i % frameLength));
  const framed = (t: tf.Tensor) => {
    const f = tf.gather(t, tf.tensor2d(starts, [frames, frameLength], 'int32'), 1);
    return window ? tf.mul(f, window) : f;
  };
  const [re, im] = complexParts(signal);
  const [outRe, outIm] = transformLastAxis(framed(re), im && framed(im), frameLength, bins, false);
  return [tf.stack([outRe, outIm], 3)];
};

/** Fourier transform operators. */
export const FOURIER_OPERATORS: OperatorFamily = {
  DFT: [{ since: 17, run: dft }],
  STFT: [{ since: 17, run: stft }],
};
