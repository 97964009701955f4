/**
 * Recovering from a device fault: a training loop that checkpoints its
 * weights every few steps; an IPU_RESET is planted on the device mid-run.
 * When it fires, the loop recovers as the error says (detach and attach:
 * the IPU comes back reset), goes back to the last checkpoint and carries on.
 * The final weights equal those of an undisturbed run.
 *
 * Run: npx tsx examples/fault-recovery.ts
 */
import { Options, RecoverableError, SimulatedErrorCode, optim, tf, trainingModel } from 'poptfjs';

const steps = 12;
const checkpointEvery = 4;
// Seeds from 1: tfjs takes a seed of 0 as no seed.
const batches = Array.from({ length: steps }, (_, i) => [tf.randomNormal([4, 8], 0, 1, 'float32', 2 * i + 1), tf.randomNormal([4, 2], 0, 1, 'float32', 2 * i + 2)]);

function build() {
  const model = tf.sequential({
    layers: [
      tf.layers.dense({ units: 16, inputShape: [8], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
      tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
    ],
  });
  const executor = trainingModel(model, { options: new Options(), loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.05 }) });
  return { model, executor };
}

/** Trains for `steps` steps; with `faultAt`, plants an IPU_RESET that fires during that step. */
async function train(faultAt?: number): Promise<tf.Tensor[]> {
  const { model, executor } = build();
  await executor.compile(batches[0]![0]!, batches[0]![1]!);
  let checkpoint = { step: 0, weights: model.getWeights().map((w) => w.clone()) };
  let step = 0;
  let planted = false;
  while (step < steps) {
    if (step === faultAt && !planted) {
      planted = true;
      const [location] = executor.device.getSimulatedErrorLocations('B0');
      executor.device.insertSimulatedError(SimulatedErrorCode.IPU_RESET, location!);
    }
    try {
      await executor(batches[step]![0]!, batches[step]![1]!);
    } catch (error) {
      if (!(error instanceof RecoverableError)) throw error;
      console.log(`step ${step}: ${error.message}`);
      executor.detachFromDevice();
      executor.attachToDevice();
      model.setWeights(checkpoint.weights);
      executor.copyWeightsToDevice();
      console.log(`recovered with ${error.recoveryAction}; resuming from the checkpoint of step ${checkpoint.step}`);
      step = checkpoint.step;
      continue;
    }
    step++;
    if (step % checkpointEvery === 0) {
      executor.copyWeightsToHost();
      checkpoint = { step, weights: model.getWeights().map((w) => w.clone()) };
    }
  }
  executor.copyWeightsToHost();
  return model.getWeights();
}

const undisturbed = await train();
const recovered = await train(6);
const difference = Math.max(...undisturbed.map((w, i) => tf.max(tf.abs(tf.sub(w, recovered[i]!))).dataSync()[0]!));
console.log(`largest difference between the undisturbed and the recovered run's weights: ${difference}`);
if (difference !== 0) process.exit(1);
