/**
 * Buffers (PopTorch's counter example). A tensor the model merely reassigns
 * is captured as a constant when the model is traced, so the counter returns
 * 1 every time; a non-trainable tf.Variable that the model updates with
 * `assign` is a buffer and keeps its value across runs: 1, then 2.
 *
 * Run: npx tsx examples/buffers.ts
 */
import { inferenceModel, tf } from 'poptfjs';

class CounterWithTensor {
  i = tf.tensor1d([0]);
  forward = (): tf.Tensor => {
    this.i = tf.add(this.i, 1);
    return this.i;
  };
}

class CounterWithBuffer {
  readonly i = tf.variable(tf.tensor1d([0]), false, 'counter_buffer');
  forward = (): tf.Tensor => {
    this.i.assign(tf.add(this.i, 1));
    return tf.clone(this.i);
  };
}

const value = (t: tf.Tensor | tf.Tensor[]) => (t as tf.Tensor).dataSync()[0];

const plain = inferenceModel(new CounterWithTensor().forward);
console.log(`tensor: ${value(await plain())} then ${value(await plain())}`);

const buffered = new CounterWithBuffer();
const counter = inferenceModel(buffered.forward);
console.log(`buffer: ${value(await counter())} then ${value(await counter())}`);

// An inference model does not copy buffers to the host by itself.
console.log(`host buffer before copyWeightsToHost: ${value(buffered.i)}`);
counter.copyWeightsToHost();
console.log(`host buffer after copyWeightsToHost: ${value(buffered.i)}`);
