/** The calls of `ops.customOp` on which the shape-rules test checks its kernel's shape rule. */
import * as tf from '@tensorflow/tfjs';
import * as ops from '../../../ops/index.js';
import type { OpCase } from '../../backend/shape_only/op_catalog.js';

/** A custom op for the cases: x · y (y broadcast), with its gradient. */
const CATALOG_OP = { name: 'CatalogScale', domain: 'test.catalog' };
ops.registerCustomOp({
  ...CATALOG_OP,
  forward: ([x, y]) => tf.mul(x!, y!),
  gradient: ([dz], [x, y]) => [tf.mul(dz!, y!), tf.sum(tf.mul(dz!, x!), 0)],
});

/** Its cases, each running the op on inputs made by the {@link OpCase} tensor maker. */
export const shapeCases: readonly OpCase[] = [
  { name: 'ops.customOp', run: (t) => ops.customOp([t.random([2, 3]), t.random([3])], CATALOG_OP.name, CATALOG_OP.domain, 1, [t.random([2, 3])]) },
  {
    name: 'ops.customOp gradient',
    run: (t) => tf.grads((x: tf.Tensor, y: tf.Tensor) => ops.customOp([x, y], CATALOG_OP.name, CATALOG_OP.domain, 1, [x])[0]!)([t.random([2, 3]), t.random([3])]),
  },
];
