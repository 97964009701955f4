/**
 * Runs a model whose loop takes the most iterations a model may run
 * (2^24), printing 'running' first: the loop tests interrupt it with SIGINT.
 *
 * Run: node --import tsx test/ops/programs/long_loop.ts
 */
import { inferenceModel, ops, tf } from 'poptfjs';

const model = inferenceModel((x: tf.Tensor) => ops.forLoop(ops.MAX_LOOP_ITERATIONS, (h) => tf.add(h, 1), [x])[0]!);
await model.compile(tf.zeros([4]));
console.log('running');
await model.run(tf.zeros([4]));
console.log('finished');
