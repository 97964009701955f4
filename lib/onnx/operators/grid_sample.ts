/**
 * GridSample (opset 16): samples a [N, C, H, W] input at the normalized
 * (x, y) locations of a [N, Hout, Wout, 2] grid, with nearest, bilinear or
 * bicubic interpolation and zeros, border or reflection padding, as PyTorch's
 * grid_sample does.
 *
 * The grid is a tensor of the graph, so the sampling positions are computed
 * with tensor ops: each interpolation tap is a batched gather of the
 * flattened input, weighted and summed.
 */
import * as tf from '@tensorflow/tfjs';
import { OnnxError } from '../proto/onnx_errors.js';
import type { OperatorFamily, OperatorImplementation } from './operator.js';

interface Sampling {
  readonly size: [number, number];
  readonly alignCorners: boolean;
  readonly padding: string;
}

/** The pixel coordinate of normalized coordinate `g` along an axis of `size` pixels. */
function unnormalize(g: tf.Tensor, size: number, alignCorners: boolean): tf.Tensor {
  return alignCorners ? tf.mul(tf.add(g, 1), (size - 1) / 2) : tf.div(tf.sub(tf.mul(tf.add(g, 1), size), 1), 2);
}

/** `x` reflected into [low, high] as often as needed. */
function reflect(x: tf.Tensor, low: number, high: number): tf.Tensor {
  const span = high - low;
  if (span <= 0) return tf.zerosLike(x);
  // `distance` beyond a bound, folded back: an even number of spans lands `rest` inside from that bound, an odd one from the other.
  const fold = (distance: tf.Tensor, even: (rest: tf.Tensor) => tf.Tensor, odd: (rest: tf.Tensor) => tf.Tensor) => {
    const n = tf.floor(tf.div(distance, span));
    const rest = tf.sub(distance, tf.mul(n, span));
    return tf.where(tf.equal(tf.mod(n, 2), 0), even(rest), odd(rest));
  };
  const below = fold(
    tf.sub(low, x),
    (r) => tf.add(r, low),
    (r) => tf.sub(high, r),
  );
  const above = fold(
    tf.sub(x, high),
    (r) => tf.sub(high, r),
    (r) => tf.add(r, low),
  );
  return tf.where(tf.less(x, low), below, tf.where(tf.greater(x, high), above, x));
}

/** A coordinate with the border or reflection padding applied (zeros padding leaves it as it is). */
function padCoordinate(x: tf.Tensor, size: number, { alignCorners, padding }: Sampling): tf.Tensor {
  if (padding === 'border') return tf.clipByValue(x, 0, size - 1);
  if (padding === 'reflection') {
    const reflected = alignCorners ? reflect(x, 0, size - 1) : reflect(x, -0.5, size - 0.5);
    return tf.clipByValue(reflected, 0, size - 1);
  }
  return x;
}

/** The input values at integer pixel positions (x, y) [N, P], 0 outside the input; `[N, C, P]`. */
function pixels(flat: tf.Tensor, x: tf.Tensor, y: tf.Tensor, [height, width]: [number, number]): tf.Tensor {
  const inside = tf.logicalAnd(tf.logicalAnd(tf.greaterEqual(x, 0), tf.lessEqual(x, width - 1)), tf.logicalAnd(tf.greaterEqual(y, 0), tf.lessEqual(y, height - 1)));
  const index = tf.cast(tf.add(tf.mul(tf.clipByValue(y, 0, height - 1), width), tf.clipByValue(x, 0, width - 1)), 'int32');
  const values = tf.gather(flat, index, 2, 1);
  return tf.mul(values, tf.expandDims(tf.cast(inside, 'float32'), 1));
}

/** The cubic convolution weights (A = -0.75) of the 4 taps around fraction `t`. */
function cubicWeights(t: tf.Tensor): tf.Tensor[] {
  const a = -0.75;
  const near = (s: tf.Tensor) => tf.add(tf.mul(tf.mul(tf.sub(tf.mul(s, a + 2), a + 3), s), s), 1);
  const far = (s: tf.Tensor) => tf.sub(tf.mul(tf.add(tf.mul(tf.sub(tf.mul(s, a), 5 * a), s), 8 * a), s), 4 * a);
  return [far(tf.add(t, 1)), near(t), near(tf.sub(1, t)), far(tf.sub(2, t))];
}

/** An integer tap position with the padding applied (for bicubic, whose taps are padded one by one). */
function padTap(i: tf.Tensor, size: number, sampling: Sampling): tf.Tensor {
  if (sampling.padding === 'zeros') return i;
  return tf.round(padCoordinate(i, size, sampling));
}

const gridSample: OperatorImplementation = (call) => {
  const input = call.input(0);
  const grid = call.input(1);
  if (input.rank !== 4) throw new OnnxError(`${call.where}: GridSample is supported for 4-D inputs`, { location: call.where });
  const [n, c, height, width] = input.shape as [number, number, number, number];
  const [, outHeight, outWidth] = grid.shape as [number, number, number, number];
  const sampling: Sampling = {
    size: [height, width],
    alignCorners: call.attrs.int('align_corners', 0) === 1,
    padding: call.attrs.string('padding_mode', 'zeros'),
  };
  const mode = call.attrs.string('mode', 'bilinear');
  const flat = tf.reshape(input, [n, c, height * width]);
  const points = tf.reshape(grid, [n, outHeight * outWidth, 2]);
  const [gx, gy] = tf.unstack(points, 2) as [tf.Tensor, tf.Tensor];
  let x = unnormalize(gx, width, sampling.alignCorners);
  let y = unnormalize(gy, height, sampling.alignCorners);
  let sampled: tf.Tensor;
  if (mode === 'bicubic') {
    const x0 = tf.floor(x);
    const y0 = tf.floor(y);
    const wx = cubicWeights(tf.sub(x, x0));
    const wy = cubicWeights(tf.sub(y, y0));
    const terms: tf.Tensor[] = [];
    for (let j = 0; j < 4; j++) {
      const yj = padTap(tf.add(y0, j - 1), height, sampling);
      for (let i = 0; i < 4; i++) {
        const xi = padTap(tf.add(x0, i - 1), width, sampling);
        terms.push(tf.mul(pixels(flat, xi, yj, sampling.size), tf.expandDims(tf.mul(wx[i]!, wy[j]!), 1)));
      }
    }
    sampled = tf.addN(terms);
  } else {
    x = padCoordinate(x, width, sampling);
    y = padCoordinate(y, height, sampling);
    if (mode === 'nearest') {
      sampled = pixels(flat, tf.round(x), tf.round(y), sampling.size);
    } else if (mode === 'bilinear') {
      const x0 = tf.floor(x);
      const y0 = tf.floor(y);
      const fx = tf.sub(x, x0);
      const fy = tf.sub(y, y0);
      const corner = (dx: number, dy: number, weight: tf.Tensor) => tf.mul(pixels(flat, tf.add(x0, dx), tf.add(y0, dy), sampling.size), tf.expandDims(weight, 1));
      sampled = tf.addN([
        corner(0, 0, tf.mul(tf.sub(1, fx), tf.sub(1, fy))),
        corner(1, 0, tf.mul(fx, tf.sub(1, fy))),
        corner(0, 1, tf.mul(tf.sub(1, fx), fy)),
        corner(1, 1, tf.mul(fx, fy)),
      ]);
    } else {
      throw new OnnxError(`${call.where}: GridSample mode '${mode}' is not supported`, { location: call.where });
    }
  }
  return [tf.reshape(sampled, [n, c, outHeight, outWidth])];
};

/** The GridSample operator. */
export const GRID_SAMPLE_OPERATORS: OperatorFamily = {
  GridSample: [{ since: 16, run: gridSample }],
};
