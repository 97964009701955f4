/**
 * `ops.nearest`: the nearest point of `y` to each point of `x`, against
 * distances worked out by hand here (integer coordinates, squared distances
 * written in the comments), in plain tfjs and on the simulated IPU; its
 * checks; its cost by hand; examples/nearest.ts.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { inferenceModel, ops, plan, trainingModel } from 'poptfjs';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { smallIpuTarget } from '../helpers.js';
import { runProgram } from '../run_program.js';

// Squared distances from each point of X (rows) to each of Y (columns):
//   (0,0):  1, 18, 82   -> 0
//   (3,4): 20,  1, 45   -> 1
//   (10,0): 81, 58,  2  -> 2
//   (1,1):  1,  8, 64   -> 0
const X = [
  [0, 0],
  [3, 4],
  [10, 0],
  [1, 1],
];
const Y = [
  [1, 0],
  [3, 3],
  [9, 1],
];
const NEAREST = [0, 1, 2, 0];

describe('ops.nearest', () => {
  it('gives the index of the nearest point by Euclidean distance, the first of equally near ones', () => {
    expect(ops.nearest(tf.tensor2d(X), tf.tensor2d(Y)).arraySync()).toEqual(NEAREST);
    expect(ops.nearest(tf.tensor2d(X), tf.tensor2d(Y)).dtype).toBe('int32');
    // (1,0) and (-1,0) are both 1 from the origin: the first.
    const sides = tf.tensor2d([1, 0, -1, 0], [2, 2]);
    expect(ops.nearest(tf.zeros([1, 2]), sides).arraySync()).toEqual([0]);
    // Points of one coordinate: 0 -> 4 (4 vs 8), 5 -> 4 (1 vs 3), 9 -> 8 (5 vs 1).
    expect(ops.nearest(tf.tensor1d([0, 5, 9]), tf.tensor1d([4, 8])).arraySync()).toEqual([0, 0, 1]);
  });

  it("has a zero gradient, as tfjs's ArgMin: the indices do not change as the points move a little", () => {
    const y = tf.tensor2d(Y);
    const gradient = tf.grad((x: tf.Tensor) => tf.sum(tf.cast(ops.nearest(x, y), 'float32')))(tf.tensor2d(X));
    expect(gradient.arraySync()).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
  });

  it('looks for each point only among the points of its batch entry, given as lists or as int32 tensors', () => {
    const x = tf.tensor2d([
      [0, 0],
      [0, 0],
      [5, 5],
    ]);
    const y = tf.tensor2d([
      [1, 0],
      [4, 4],
      [0, 2],
      [6, 6],
    ]);
    // Entry 0: x0 against y0 (1), y1 (32) -> 0. Entry 1: x1 against y2 (4), y3 (72) -> 2, though y0 is nearer;
    // x2 against y2 (25 + 9), y3 (2) -> 3.
    expect(ops.nearest(x, y, [0, 1, 1], [0, 0, 1, 1]).arraySync()).toEqual([0, 2, 3]);
    expect(ops.nearest(x, y, tf.tensor1d([0, 1, 1], 'int32'), tf.tensor1d([0, 0, 1, 1], 'int32')).arraySync()).toEqual([0, 2, 3]);
    // One list alone: every point of the other set is in entry 0. x2 is 2 from y1 and from y3: the first.
    expect(ops.nearest(x, y, [0, 0, 0]).arraySync()).toEqual([0, 0, 1]);
  });

  it('runs on the simulated IPU with the numbers of plain tfjs, as one node of its own, and trains through what it indexes', async () => {
    const executor = inferenceModel((x: tf.Tensor, y: tf.Tensor) => ops.nearest(x, y));
    expect(((await executor(tf.tensor2d(X), tf.tensor2d(Y))) as tf.Tensor).arraySync()).toEqual(NEAREST);
    expect(executor.irText()).toMatch(/int32\[4\] = poptfjs\.Nearest\(x=%0, y=%1\)/);
    executor.destroy();
    // The points' features gathered at the nearest indices: the gradient reaches the features, none the points.
    const features = tf.variable(tf.tensor2d([[1], [2], [3]]), true, 'features');
    const training = trainingModel((x: tf.Tensor, y: tf.Tensor) => {
      const picked = tf.gather(features, ops.nearest(x, y));
      return [picked, ops.identityLoss(picked, 'sum')];
    });
    const [, loss] = (await training(tf.tensor2d(X), tf.tensor2d(Y))) as tf.Tensor[];
    // Features 1, 2, 3, 1 summed.
    expect(loss!.dataSync()[0]).toBe(7);
    training.destroy();
  });

  it('refuses points it cannot measure and batch entries PopTorch refuses, naming the argument', () => {
    const x = tf.tensor2d(X);
    const y = tf.tensor2d(Y);
    expect(() => ops.nearest(tf.zeros([2, 2, 2]), y)).toThrow('nearest: `x` must be a tensor of points, [count, coordinates] or [count], got 3 dimensions');
    expect(() => ops.nearest(x, tf.zeros([3, 2], 'int32'))).toThrow('nearest: `y` must be float32, got int32');
    expect(() => ops.nearest(x, tf.zeros([3, 3]))).toThrow('nearest: inputs shapes inconsistent x.shape[1]=2 vs. y.shape[1]=3');
    expect(() => ops.nearest(x, y, [1, 0, 0, 0], [0, 0, 1])).toThrow("nearest: 'batchX' is not sorted");
    expect(() => ops.nearest(x, y, [0, 0, 1], [0, 0, 1])).toThrow('nearest: `batchX` has 3 entries for 4 points');
    expect(() => ops.nearest(x, y, [0, 0, 1, 1], [0, 0, 2])).toThrow("nearest: some batch indices occur in 'batchX' that do not occur in 'batchY'");
    expect(() => ops.nearest(x, y, tf.tensor1d([0, 0, 1, 1]), tf.tensor1d([0, 0, 1], 'int32'))).toThrow(
      'nearest: `batchX` must be int32 of shape [4] (one entry a point), got float32[4]',
    );
    // Entries given as tensors are read when the op runs: a point whose entry has no point of y is an error then.
    expect(() => ops.nearest(x, y, tf.tensor1d([0, 0, 1, 1], 'int32'), tf.tensor1d([0, 0, 0], 'int32'))).toThrow(
      'nearest: point 2 of x is in batch entry 1, in which y has no point',
    );
  });

  it("costs PopTorch's lowering: the differences, their norms and each row's least, the differences and distances temporary", async () => {
    const executor = inferenceModel((x: tf.Tensor, y: tf.Tensor) => ops.nearest(x, y));
    await executor.compile(tf.tensor2d(X), tf.tensor2d(Y));
    const graph = executor.executable.graph;
    const node = graph.nodes.find((n) => n.kernel === 'poptfjs.Nearest')!;
    const target = smallIpuTarget({ tiles: 16, hostBytesPerCycle: 2 });
    // 4 × 3 pairs of 2 coordinates: 24 differences, 2 a tile at 1.5 cycles (float32 Sub) after the vertex's 170; x's and
    // y's shares of 2 elements (8 B each) come over the exchange at 4 B a cycle; one sync.
    const differences = { compute: 170 + 2 * 1.5, exchange: 16 / 4, sync: 90 };
    // Summed to 12 norms: 2 elements a tile (0.5 cycles each), each norm's 2 partial sums over 2 tiles: 24 partials,
    // 2 a tile exchanged (8 B), added (170 + 2 × 0.5); two syncs.
    const norms = { compute: 170 + 2 * 0.5 + (170 + 2 * 0.5), exchange: 8 / 4, sync: 2 * 90 };
    // A square root of each of the 12 norms, 1 a tile at 5 cycles (float32 Sqrt); one sync.
    const roots = { compute: 170 + 5, exchange: 0, sync: 90 };
    // Each point's least of 3 distances: 1 a tile, partial results from 3 tiles, 12 partials, 1 a tile (4 B), then added.
    const least = { compute: 170 + 0.5 + (170 + 0.5), exchange: 4 / 4, sync: 2 * 90 };
    const steps = [differences, norms, roots, least];
    expect(kernelCost(graph, node, target)).toEqual({
      compute: steps.reduce((n, s) => n + s.compute, 0),
      exchange: steps.reduce((n, s) => n + s.exchange, 0),
      sync: steps.reduce((n, s) => n + s.sync, 0),
      // The 24 differences and the 12 distances, float32.
      temporaryBytes: (24 + 12) * 4,
    });
    executor.destroy();
    // Planned with shapes only: the output is int32 [N].
    const planned = await plan(() => (x: tf.Tensor, y: tf.Tensor) => ops.nearest(x, y), { inputs: [{ shape: [1000, 3] }, { shape: [500, 3] }] });
    expect(planned.fits).toBe(true);
  });

  it('examples/nearest.ts prints the same indices on the simulated IPU and in tfjs, each query in its own cloud', () => {
    const { status, stdout, stderr } = runProgram('examples/nearest.ts', []);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    // Query (3, 3) is in the cloud of (10, 10): its nearest there is point 3, though points 1 and 2 are nearer.
    expect(stdout).toContain('on the simulated IPU: 1 2 5 3');
    expect(stdout).toContain('in plain tfjs:        1 2 5 3');
    expect(stdout).toContain('poptfjs.Nearest(x=%0, y=%1, batchX=%2, batchY=%3)');
  });
});
