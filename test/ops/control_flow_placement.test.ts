/**
 * `ops.forLoop` and `ops.cond` in blocks on several IPUs, as PopTorch's
 * test_loop_with_same_trip_count_on_multiple_ipus and test_if_on_multiple_ipus.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Block, Options, ShardedExecution, Stage, inferenceModel, ops } from 'poptfjs';
import { expectClose } from '../helpers.js';

describe('control flow on several IPUs', () => {
  it('runs a loop in each of two blocks on their IPUs', async () => {
    const fn = (x: tf.Tensor, y: tf.Tensor) => {
      const body = (a: tf.Tensor, b: tf.Tensor) => [tf.add(a, b), b];
      const [x1, y1] = Block.run({ userId: '0', ipuId: 0 }, () => ops.forLoop(5, body, [x, y]));
      const [x2, y2] = Block.run({ userId: '1', ipuId: 1 }, () => ops.forLoop(5, body, [x1!, y1!]));
      return [x2!, y2!];
    };
    const executor = inferenceModel(fn, { options: new Options().setExecutionStrategy(ShardedExecution(new Stage('0'), new Stage('1'))) });
    const x = tf.tensor1d([1, 2]);
    const y = tf.tensor1d([1, 2]);
    const [out] = (await executor.run(x, y)) as tf.Tensor[];
    expectClose(out!, x.add(y.mul(10)));
    const graph = executor.executable.graph;
    expect(graph.nodes.map((n) => [n.kernel, n.annotations.block])).toEqual([
      ['poptfjs.ForLoop', '0'],
      ['poptfjs.ForLoop', '1'],
    ]);
  });

  it('runs a cond in each of two blocks on their IPUs', async () => {
    const fn = (c: tf.Tensor, x: tf.Tensor, y: tf.Tensor) => {
      const thenBody = (a: tf.Tensor, b: tf.Tensor) => [tf.add(a, b), b];
      const elseBody = (a: tf.Tensor, b: tf.Tensor) => [a, tf.mul(a, b)];
      const [x1, y1] = Block.run({ userId: '0', ipuId: 0 }, () => ops.cond(c, thenBody, [x, y], elseBody, [x, y]));
      return Block.run({ userId: '1', ipuId: 1 }, () => ops.cond(tf.logicalNot(c), thenBody, [x1!, y1!], elseBody, [x1!, y1!]));
    };
    const executor = inferenceModel(fn, { options: new Options().setExecutionStrategy(ShardedExecution(new Stage('0'), new Stage('1'))) });
    const x = tf.tensor1d([1, 2]);
    const y = tf.tensor1d([3, 4]);
    const [a, b] = (await executor.run(tf.tensor1d([true], 'bool'), x, y)) as tf.Tensor[];
    expectClose(a!, x.add(y));
    expectClose(b!, x.add(y).mul(y));
  });
});
