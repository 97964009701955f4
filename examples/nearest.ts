/**
 * Nearest neighbours on the simulated IPU: `ops.nearest` finds, for each
 * query point, the nearest of a set of points, as PopTorch's `nearest` does
 * for graph models (torch_cluster's operator). The points are in two batch
 * entries (two point clouds in one batch): each query looks only in its own
 * cloud. The model runs on the simulated IPU and in plain tfjs; both print
 * the same indices, and the graph shows the op as one node of its own.
 *
 * Run: npx tsx examples/nearest.ts
 */
import { inferenceModel, ops, tf } from 'poptfjs';

// Two clouds of three points each: entry 0 near the origin, entry 1 near (10, 10).
const points = tf.tensor2d([
  [0, 0],
  [1, 0],
  [0, 1],
  [10, 10],
  [11, 10],
  [10, 11],
]);
const cloudOfPoint = [0, 0, 0, 1, 1, 1];
// Four queries: two in each cloud. The last query is nearer to point 2 than to any point of its own cloud.
const queries = tf.tensor2d([
  [0.9, 0.2],
  [0.1, 0.8],
  [10.2, 10.9],
  [3, 3],
]);
const cloudOfQuery = [0, 0, 1, 1];

const model = (q: tf.Tensor, p: tf.Tensor) => ops.nearest(q, p, cloudOfQuery, cloudOfPoint);

const onIpu = inferenceModel(model);
const indices = (await onIpu(queries, points)) as tf.Tensor1D;
console.log(`on the simulated IPU: ${(await indices.array()).join(' ')}`);
console.log(`in plain tfjs:        ${(await model(queries, points).array()).join(' ')}`);
console.log(
  `the node in the graph: ${onIpu
    .irText()
    .split('\n')
    .find((line) => line.includes('poptfjs.Nearest'))
    ?.trim()}`,
);
onIpu.destroy();
