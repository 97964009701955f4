/**
 * Why float16 training needs loss scaling: a float16 linear model whose
 * gradients are too small for float16.
 *
 * The model is a Linear(8, 4) layer made float16 with `half`, trained on
 * float16 inputs towards float32 targets. Its loss is the mean squared error
 * weighted by 2^-26 (think of an auxiliary loss with a small weight), and
 * the learning rate is 0.1 / 2^-26, so in exact arithmetic this is plain MSE
 * training with lr 0.1. In float16, the weights' gradients (about 1e-9) are
 * below the smallest float16 number (6e-8): they flush to zero and the
 * weights never move. Scaling the loss by 1024 before the backward pass (the
 * gradients are divided by 1024 again, in float32, before the update) keeps
 * them in range; automatic loss scaling finds a scale by itself.
 *
 * The second part shows velocity scaling: with the combined SGD variant the
 * velocity is stored in float16 too (it holds the unscaled gradients, so loss
 * scaling does not help it) and underflows unless `velocityScaling` lifts it.
 *
 * Run: npx tsx examples/loss-scaling.ts
 */
import { Options, half, optim, tf, trainingModel } from 'poptfjs';

const LOSS_WEIGHT = 2 ** -26;
const STEPS = 60;
const PRINT_EVERY = 10;

const x = half(tf.randomUniform([32, 8], -1, 1, 'float32', 1));
const y = tf.matMul(x, tf.randomNormal([8, 4], 0, 1, 'float32', 2));
// The float32 model takes the same values as float32: a float16 input would make its float32 weights compute in float16.
const input32 = tf.clone(x);
const weightedMse = (yTrue: tf.Tensor, yPred: tf.Tensor) => tf.mul(tf.mean(tf.square(tf.sub(yTrue, yPred))), LOSS_WEIGHT);

function linearModel(float16: boolean): tf.Sequential {
  const model = tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [8], kernelInitializer: tf.initializers.glorotUniform({ seed: 3 }) })] });
  return float16 ? half(model) : model;
}

/** Trains a fresh model; returns the MSE (loss / weight) of every step, how far the weights moved and the final loss scale. */
async function train(options: optim.SGDOptions, { automaticLossScaling = false, float16 = true } = {}): Promise<{ mse: number[]; moved: number; scale: number }> {
  const model = linearModel(float16);
  const before = model.getWeights().map((w) => w.clone());
  const opts = new Options();
  opts.Training.setAutomaticLossScaling(automaticLossScaling);
  const executor = trainingModel(model, { loss: weightedMse, options: opts, optimizer: new optim.SGD(model, { lr: 0.1 / LOSS_WEIGHT, ...options }) });
  const mse: number[] = [];
  for (let step = 0; step < STEPS; step++) {
    const [out, loss] = await executor.run(float16 ? x : input32, y);
    mse.push(loss.dataSync()[0]! / LOSS_WEIGHT);
    tf.dispose([out as tf.Tensor, loss]);
  }
  const scale = executor.currentLossScale();
  executor.copyWeightsToHost();
  const moved = Math.max(...model.getWeights().map((w, i) => tf.max(tf.abs(tf.sub(w, before[i]!))).dataSync()[0]!));
  executor.destroy();
  return { mse, moved, scale };
}

function printCurves(title: string, runs: Record<string, { mse: number[] }>): void {
  const names = Object.keys(runs);
  console.log(title);
  const row = (cells: string[]) => console.log(cells.map((c, i) => (i === 0 ? c.padStart(5) : c.padStart(20))).join(''));
  row(['step', ...names]);
  for (let step = 0; step < STEPS; step += PRINT_EVERY) row([String(step), ...names.map((n) => runs[n]!.mse[step]!.toFixed(6))]);
  row([String(STEPS - 1), ...names.map((n) => runs[n]!.mse[STEPS - 1]!.toFixed(6))]);
}

const float32 = await train({}, { float16: false });
const unscaled = await train({});
const scaled = await train({ lossScaling: 1024 });
const automatic = await train({}, { automaticLossScaling: true });
printCurves('loss curves (MSE) of a float16 model, loss weighted by 2^-26:', {
  'float32 model': float32,
  'no scaling': unscaled,
  'lossScaling 1024': scaled,
  'automatic scaling': automatic,
});
console.log(`no scaling: weights moved by at most ${unscaled.moved} (the float16 gradients flushed to zero)`);
console.log(`lossScaling 1024: weights moved by at most ${scaled.moved.toFixed(4)}`);
console.log(`automatic loss scaling: weights moved by at most ${automatic.moved.toFixed(4)}, final loss scale ${automatic.scale}`);

const combined = { lossScaling: 1024, momentum: 0.9, useCombinedAccum: true };
const velocityUnscaled = await train(combined);
const velocityScaled = await train({ ...combined, velocityScaling: 1024 });
printCurves('loss curves (MSE), combined SGD with momentum 0.9 and lossScaling 1024:', { 'velocity 1': velocityUnscaled, 'velocity 1024': velocityScaled });
console.log(`velocityScaling 1: weights moved by at most ${velocityUnscaled.moved} (the float16 velocity flushed to zero)`);
console.log(`velocityScaling 1024: weights moved by at most ${velocityScaled.moved.toFixed(4)}`);
