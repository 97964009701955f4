/**
 * The basic training example of PopTorch's guide, on the simulated IPU:
 * a Linear(10, 10) layer trained with MSE and SGD (lr 0.01) for 800 steps on
 * one sample, then the weights are copied back to the host model, whose own
 * output matches the one computed on the device.
 *
 * Run: npx tsx examples/train-basic.ts (or `npm start` after `npm install`).
 */
import { currentBackend, tf, trainingModel } from 'poptfjs';

const model = tf.sequential({ layers: [tf.layers.dense({ units: 10, inputShape: [10], kernelInitializer: tf.initializers.glorotUniform({ seed: 0 }) })] });

// Wrap the model in the poptfjs training wrapper: the loss is computed on the device.
const poptfjsModel = trainingModel(model, { loss: 'meanSquaredError' });

// Some dummy inputs (one sample).
const input = tf.randomNormal([1, 10], 0, 1, 'float32', 1);
const target = tf.randomNormal([1, 10], 0, 1, 'float32', 2);

let output: tf.Tensor | undefined;
for (let i = 0; i < 800; i++) {
  // Each call runs the forward pass, the loss and the backward pass in one step.
  const [out, loss] = await poptfjsModel(input, target);
  if (i % 100 === 0 || i === 799) console.log(`${i}: loss ${loss.dataSync()[0]!.toFixed(6)}`);
  output?.dispose();
  output = out as tf.Tensor;
  loss.dispose();
}

// Copy the trained weights from the device back into the host model.
poptfjsModel.copyWeightsToHost();

// Execute the trained weights on the host.
const nativeOut = model.predict(input) as tf.Tensor;
const maxDifference = tf.max(tf.abs(tf.sub(nativeOut, output!))).dataSync()[0]!;
console.log(`trained on a simulated IPU (tfjs '${currentBackend()}' backend); host and device outputs differ by at most ${maxDifference.toExponential(2)}`);
if (!(maxDifference <= 1e-4)) {
  console.error('host and device outputs differ by more than 1e-4');
  process.exit(1);
}
