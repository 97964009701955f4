/**
 * `ops.MultiConv`: two small convolutions of different shapes planned
 * together, in parallel on shares of the tiles or one after the other, and
 * one after the other with poplibs' convolution dithering, which starts each
 * convolution's layout on a tile its shape picks instead of tile 0. For each,
 * the simulated time of a call, the most convolution weight bytes one tile
 * holds, and the outputs (the same in every case).
 *
 * Run: npx tsx examples/multi-conv.ts
 */
import { inferenceModel, ops, tf } from 'poptfjs';

const w1 = tf.variable(tf.randomNormal([1, 1, 8, 16], 0, 0.1, 'float32', 1), true, 'small_conv');
const w2 = tf.variable(tf.randomNormal([1, 1, 8, 16], 0, 0.1, 'float32', 2), true, 'wide_conv');
const x = tf.randomNormal([1, 1, 1, 8], 0, 1, 'float32', 3);
const y = tf.randomNormal([1, 3, 3, 8], 0, 1, 'float32', 4);

console.log('plan                     µs/call   conv. weights on the fullest tile   output checksum');
for (const [label, multiConv] of [
  ['Parallel', new ops.MultiConv().planType(ops.MultiConvPlanType.Parallel)],
  ['Serial', new ops.MultiConv().planType(ops.MultiConvPlanType.Serial)],
  ['Serial, dithered', new ops.MultiConv().planType(ops.MultiConvPlanType.Serial).enableConvDithering(true)],
] as const) {
  const executor = inferenceModel((a: tf.Tensor, b: tf.Tensor) =>
    multiConv.run(() => [tf.conv2d(a as tf.Tensor4D, w1 as tf.Tensor4D, 1, 'same'), tf.conv2d(b as tf.Tensor4D, w2 as tf.Tensor4D, 1, 'same')]),
  );
  const outputs = (await executor.run(x, y)) as tf.Tensor[];
  const { timeline, memory } = executor.executable.hardware;
  const checksum = outputs.map((t) => tf.sum(t).arraySync() as number).reduce((s, v) => s + v, 0);
  console.log(
    `${label.padEnd(24)} ${(timeline.duration * 1e6).toFixed(3).padStart(7)}   ${`${memory.ipus[0]!.convolutionWeightsPerTile!.toFixed(2)} bytes`.padStart(33)}   ${checksum.toFixed(5)}`,
  );
  tf.dispose(outputs);
  executor.destroy();
}
