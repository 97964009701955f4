/**
 * Instances of a user's class as a model's inputs, taken apart and built
 * again by a custom argument parser, as PopTorch's `registerCustomArgParser`
 * (tests/dataloader_test.py: the CustomBatch of data and label and its
 * CustomBatchParser).
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it } from 'vitest';
import { type CustomArgParser, inferenceModel, ops, optim, registerCustomArgParser, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

class CustomBatch {
  constructor(
    readonly data: tf.Tensor,
    readonly label: tf.Tensor,
  ) {}
}

class LabelledBatch extends CustomBatch {}

const parser: CustomArgParser<CustomBatch> = {
  *yieldTensors(batch) {
    yield batch.data;
    yield batch.label;
  },
  reconstruct(original, tensors) {
    const Type = original.constructor as new (data: tf.Tensor, label: tf.Tensor) => CustomBatch;
    return new Type(tensors.next().value as tf.Tensor, tensors.next().value as tf.Tensor);
  },
};

afterEach(() => registerCustomArgParser(CustomBatch, null));

// The executor's call types take nested tensors; an instance of a class with a parser is passed with a cast.
describe('registerCustomArgParser', () => {
  it('lets instances of a class be inputs: the model gets the instance its parser builds around the traced tensors', async () => {
    registerCustomArgParser(CustomBatch, parser);
    const w = tf.variable(tf.tensor2d([[1], [2], [3]]), true, 'cap_w');
    const model = (batch: CustomBatch, scale: number) => {
      expect(batch).toBeInstanceOf(CustomBatch);
      return tf.sub(tf.mul(tf.matMul(batch.data, w), scale), batch.label);
    };
    const executor = inferenceModel(model);
    for (const seed of [1, 2]) {
      const batch = new CustomBatch(tf.randomNormal([4, 3], 0, 1, 'float32', seed), tf.randomNormal([4, 1], 0, 1, 'float32', seed + 10));
      expectClose((await executor.run(batch as never, 2)) as tf.Tensor, tf.sub(tf.mul(tf.matMul(batch.data, w), 2), batch.label));
    }
    expect(executor.executable.inputSignature).toHaveLength(2);
    // A subclass without a parser of its own takes its base class's.
    const sub = new LabelledBatch(tf.ones([4, 3]), tf.zeros([4, 1]));
    await expect(executor.run(sub as never, 2)).rejects.toThrow(
      'input 0 is a LabelledBatch, but the model was compiled with a CustomBatch (2 tensor(s) by its custom argument parser) there',
    );
    executor.destroy();
  });

  it('trains on such inputs as on their tensors', async () => {
    registerCustomArgParser(CustomBatch, parser);
    const start = tf.tensor2d([[0.5], [-0.5], [0.25]]);
    const w1 = tf.variable(start.clone(), true, 'cap_w1');
    const w2 = tf.variable(start.clone(), true, 'cap_w2');
    const data = tf.randomNormal([6, 3], 0, 1, 'float32', 5);
    const label = tf.randomNormal([6, 1], 0, 1, 'float32', 6);
    const loss = (pred: tf.Tensor, y: tf.Tensor) => ops.identityLoss(tf.square(tf.sub(pred, y)), 'mean');
    const viaIdentity = trainingModel((b: CustomBatch) => loss(tf.matMul(b.data, w1), b.label), { optimizer: new optim.SGD([w1], { lr: 0.1 }) });
    const plain = trainingModel((x: tf.Tensor, y: tf.Tensor) => loss(tf.matMul(x, w2), y), { optimizer: new optim.SGD([w2], { lr: 0.1 }) });
    for (let step = 0; step < 3; step++) {
      tf.dispose([await viaIdentity.run(new CustomBatch(data, label) as never), await plain.run(data, label)]);
    }
    viaIdentity.copyWeightsToHost();
    plain.copyWeightsToHost();
    expect(Array.from(w1.dataSync())).toEqual(Array.from(w2.dataSync()));
    expect(Array.from(w1.dataSync())).not.toEqual(Array.from(start.dataSync()));
    viaIdentity.destroy();
    plain.destroy();
  });

  it('is needed for a class instance input, and checked: a parser without its methods, tensors it yields, removal with null', async () => {
    const model = (b: CustomBatch) => tf.add(b.data, 1);
    await expect(inferenceModel(model).compile(new CustomBatch(tf.ones([2]), tf.ones([2])) as never)).rejects.toThrow(
      'input 0 is a CustomBatch; expected a tf.Tensor, an array or plain object of them, or a number, string, boolean, null or undefined',
    );
    expect(() => registerCustomArgParser(CustomBatch, {} as never)).toThrow(
      'registerCustomArgParser: the parser must implement CustomArgParser (yieldTensors(value) and reconstruct(original, tensors))',
    );
    registerCustomArgParser(CustomBatch, { ...parser, yieldTensors: (b) => [b.data, 3 as never] });
    await expect(inferenceModel(model).compile(new CustomBatch(tf.ones([2]), tf.ones([2])) as never)).rejects.toThrow(
      'input 0: the custom argument parser of a CustomBatch yielded 3 as its tensor 1; expected tf.Tensors only',
    );
    registerCustomArgParser(CustomBatch, null);
    await expect(inferenceModel(model).compile(new CustomBatch(tf.ones([2]), tf.ones([2])) as never)).rejects.toThrow('input 0 is a CustomBatch');
  });
});
