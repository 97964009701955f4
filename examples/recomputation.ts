/**
 * Recomputation: trading compute for memory. A 16-layer MLP trained with a
 * large micro-batch on a small simulated IPU (42 tiles, 25.6 MiB) does not fit
 * when the backward pass keeps every activation of the forward pass. With
 * `autoRecomputation(Standard)` only about √n of the activations are stored
 * and the others are remade segment by segment in the backward pass; with
 * `RecomputeAll` and a `recomputationCheckpoint` every layer output but the
 * checkpoint is remade. Each run prints its peak activations, simulated step
 * time and whether it fits; the losses are the same in every case.
 *
 * Run: npx tsx examples/recomputation.ts
 */
import { Options, RecomputationType, ops, optim, tf, trainingModel } from 'poptfjs';

const width = 256;
const depth = 16;
const microBatch = 1024;
const smallIpu = { tiles: 42 };

/** The MLP as a function of its layers, with a checkpoint after layer `checkpointAfter` if given. */
function mlp(checkpointAfter?: number) {
  const layers = Array.from({ length: depth }, (_, i) => {
    const layer = tf.layers.dense({ units: width, inputShape: [width], activation: 'tanh', kernelInitializer: tf.initializers.glorotNormal({ seed: i + 1 }) });
    layer.apply(tf.zeros([1, width]));
    return layer;
  });
  const model = (x: tf.Tensor) => {
    layers.forEach((layer, i) => {
      x = layer.apply(x) as tf.Tensor;
      if (i === checkpointAfter) x = ops.recomputationCheckpoint(x);
    });
    return x;
  };
  return { model, variables: layers.flatMap((l) => l.trainableWeights.map((w) => w.read() as tf.Variable)) };
}

const x = tf.randomNormal([microBatch, width], 0, 1, 'float32', 1);
const y = tf.randomNormal([microBatch, width], 0, 0.5, 'float32', 2);
const MiB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

const cases: Array<{ label: string; type: RecomputationType; checkpointAfter?: number }> = [
  { label: 'None', type: RecomputationType.None },
  { label: 'Standard', type: RecomputationType.Standard },
  { label: 'RecomputeAll + checkpoint after layer 8', type: RecomputationType.RecomputeAll, checkpointAfter: 7 },
];
console.log('recomputation                             activations  used of 25.6 MiB  step (simulated)  fits  loss after 3 steps');
for (const c of cases) {
  const { model, variables } = mlp(c.checkpointAfter);
  const opts = new Options().ipuTarget(smallIpu).autoRecomputation(c.type).allowOutOfMemory(true);
  const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(variables, { lr: 0.05 }) });
  await executor.compile(x, y);
  const { memory, timeline } = executor.executable.hardware;
  let loss = 'not run: does not fit';
  if (memory.fits) {
    for (let step = 0; step < 3; step++) {
      const [, l] = await executor(x, y);
      loss = (await l.data())[0]!.toFixed(6);
    }
  }
  const ipu = memory.ipus[0]!;
  console.log(
    `${c.label.padEnd(41)} ${MiB(ipu.byKind.activations).padEnd(12)} ${MiB(ipu.used).padEnd(17)} ${`${(timeline.duration * 1e6).toFixed(1)} µs`.padEnd(17)} ${(memory.fits ? 'yes' : 'no').padEnd(5)} ${loss}`,
  );
  executor.destroy();
}
