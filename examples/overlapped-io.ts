/**
 * Host I/O overlapped with compute: dense layers whose inputs and outputs
 * take about as long to move as the layers take to run, run with and without I/O tiles and with its
 * input and output marked for overlap (`ops.setOverlapForInput` /
 * `setOverlapForOutput`, PopTorch's `set_overlap_for_input/output`). For each,
 * the simulated time of a call, its throughput, the I/O tiles' buffers, and
 * the outputs of a real run (the same in every case: the marks move the
 * transfers, not the numbers).
 *
 * Run: npx tsx examples/overlapped-io.ts
 */
import { Options, ShardedExecution, inferenceModel, ops, tf } from 'poptfjs';

const features = 2048;
const microBatch = 32;
const deviceIterations = 8;

const layers = Array.from({ length: 4 }, (_, i) => {
  const layer = tf.layers.dense({ units: features, inputShape: [features], kernelInitializer: tf.initializers.randomNormal({ stddev: 0.02, seed: i }) });
  layer.apply(tf.zeros([1, features]));
  return layer;
});

/** The layers, their input and output marked with `mode` (unmarked without). */
function model(mode?: ops.OverlapMode) {
  return (x: tf.Tensor) => {
    const y = layers.reduce((h, layer) => layer.apply(h) as tf.Tensor, mode ? ops.setOverlapForInput(x, mode) : x);
    return mode ? ops.setOverlapForOutput(y, mode) : y;
  };
}

const x = tf.randomNormal([deviceIterations * microBatch, features], 0, 1, 'float32', 2);
console.log('variant                                      ms/call   samples/s   I/O tile buffers   output checksum');
for (const [label, ioTiles, mode] of [
  ['no I/O tiles', 0, undefined],
  ['64 I/O tiles, nothing marked', 64, undefined],
  ['64 I/O tiles, OverlapAccumulationLoop', 64, ops.OverlapMode.OverlapAccumulationLoop],
  ['64 I/O tiles, OverlapDeviceIterationLoop', 64, ops.OverlapMode.OverlapDeviceIterationLoop],
] as const) {
  const options = new Options().deviceIterations(deviceIterations).setExecutionStrategy(ShardedExecution());
  if (ioTiles > 0) options.TensorLocations.numIOTiles(ioTiles);
  const executor = inferenceModel(model(mode), { options });
  const y = (await executor.run(x)) as tf.Tensor;
  const { timeline, memory } = executor.executable.hardware;
  const buffers = memory.ipus[0]!.ioTiles ? `${(memory.ipus[0]!.ioTiles.hostBuffers / 2 ** 20).toFixed(1)} MiB` : '-';
  const checksum = (await tf.sum(y).data())[0]!.toFixed(4);
  console.log(
    `${label.padEnd(44)} ${(timeline.duration * 1e3).toFixed(3).padStart(7)}   ${timeline.throughput.toFixed(0).padStart(9)}   ${buffers.padStart(16)}   ${checksum}`,
  );
  y.dispose();
  executor.destroy();
}
x.dispose();
