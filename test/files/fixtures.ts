/**
 * Models and executors shared by the tests of poptfjs's files.
 */
import { Block, Options, OutputMode, SerialPhasedExecution, Phase, Stage, SyncPattern, tf, trainingModel, inferenceModel, optim, type PoplarExecutor } from 'poptfjs';

/**
 * PopTorch's `ExampleModelWithLoss` forward part: Linear(10, 10), with seeded
 * weights (`units` other than 10 makes another architecture, for another
 * executable-cache entry).
 */
export function linearModel(seed = 0, units = 10): tf.LayersModel {
  return tf.sequential({ layers: [tf.layers.dense({ units, inputShape: [10], kernelInitializer: tf.initializers.glorotUniform({ seed }) })] });
}

/** A model with dropout (random state) and a ReLU, for checkpoints. */
export function dropoutModel(seed = 0): tf.LayersModel {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 16, inputShape: [8], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed }) }),
      tf.layers.dropout({ rate: 0.25 }),
      tf.layers.dense({ units: 4, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }) }),
    ],
  });
}

/** One sample of the seed example: input and target. */
export function sample(batch = 1): [tf.Tensor, tf.Tensor] {
  return [tf.randomNormal([batch, 10], 0, 1, 'float32', 1), tf.randomNormal([batch, 10], 0, 1, 'float32', 2)];
}

function phasedStrategy() {
  const strategy = SerialPhasedExecution(Phase(Stage('A')), Phase(Stage('B')));
  strategy.phase(0).ipus(0);
  strategy.phase(1).ipus(0);
  return strategy;
}

/** Compiled executors covering the executable's variants: training and inference, pipelined, replicated, phased, split weights. */
export async function compiledVariants(): Promise<Array<{ name: string; executor: PoplarExecutor; inputs: tf.Tensor[] }>> {
  const offline = () => new Options().useOfflineIpuTarget(2);
  const out: Array<{ name: string; executor: PoplarExecutor; inputs: tf.Tensor[] }> = [];
  const [x, y] = sample(4);

  const training = trainingModel(linearModel(), { options: offline(), loss: 'meanSquaredError' });
  await training.compile(x, y);
  out.push({ name: 'training, default SGD', executor: training, inputs: [x, y] });

  const inference = inferenceModel(linearModel(), { options: offline().deviceIterations(2) });
  await inference.compile(x);
  out.push({ name: 'inference, 2 device iterations', executor: inference, inputs: [x] });

  const layers = [0, 1].map((i) => tf.layers.dense({ units: 10, inputShape: [10], kernelInitializer: tf.initializers.glorotUniform({ seed: i }) }));
  const pipelineOptions = offline().deviceIterations(2).replicationFactor(2).syncPattern(SyncPattern.SinglePipeline);
  pipelineOptions.Training.gradientAccumulation(4);
  const pipelined = trainingModel(
    (t: tf.Tensor) =>
      Block.run({ userId: 'b1', ipuId: 1 }, () => layers[1]!.apply(Block.run({ userId: 'b0', ipuId: 0 }, () => tf.relu(layers[0]!.apply(t) as tf.Tensor))) as tf.Tensor),
    { options: pipelineOptions, loss: 'meanSquaredError' },
  );
  const batch = [tf.zeros([16, 10]), tf.zeros([16, 10])];
  await pipelined.compile(...batch);
  out.push({ name: 'pipelined function on 2 IPUs, replicated, each IPU meeting the host on its own', executor: pipelined, inputs: batch });

  const phasedLayers = [0, 1].map((i) => tf.layers.dense({ units: 10, inputShape: [10], kernelInitializer: tf.initializers.glorotUniform({ seed: 10 + i }) }));
  const phased = trainingModel(
    (t: tf.Tensor) =>
      Block.run({ userId: 'B' }, () => tf.tanh(phasedLayers[1]!.apply(Block.run({ userId: 'A' }, () => tf.tanh(phasedLayers[0]!.apply(t) as tf.Tensor))) as tf.Tensor)),
    { options: offline().setExecutionStrategy(phasedStrategy()), loss: 'meanSquaredError' },
  );
  await phased.compile(x, y);
  out.push({ name: 'serial phased', executor: phased, inputs: [x, y] });

  const model = linearModel(3);
  const momentum = trainingModel(model, { options: offline(), loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.05, momentum: 0.9 }) });
  await momentum.compile(x, y);
  out.push({ name: 'training with momentum', executor: momentum, inputs: [x, y] });

  const synthetic = inferenceModel(linearModel(4), { options: offline().enableSyntheticData(true).anchorTensor('input', '%0', OutputMode.Sum) });
  await synthetic.compile(x);
  out.push({ name: 'inference on synthetic data, with an anchored tensor', executor: synthetic, inputs: [x] });
  return out;
}
