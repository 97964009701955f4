/**
 * Annotating a model with `Block` scopes (PopTorch's Block example): four
 * layers on four IPUs, pipelined over four device iterations.
 *
 * Run: npx tsx examples/blocks.ts
 */
import { Block, Options, inferenceModel, tf } from 'poptfjs';

const layer1 = tf.layers.dense({ units: 10, inputShape: [5] });
const layer2 = tf.layers.dense({ units: 5 });
const layer3 = tf.layers.dense({ units: 5 });
const layer4 = tf.layers.dense({ units: 5 });

function network(input: tf.Tensor): tf.Tensor {
  let x = input;
  // Explicit layers on a certain IPU.
  Block.useAutoId();
  x = Block.run({ ipuId: 0 }, () => tf.relu(layer1.apply(x) as tf.Tensor));
  x = Block.run({ ipuId: 1 }, () => tf.relu(layer2.apply(x) as tf.Tensor));
  x = Block.run({ ipuId: 2 }, () => tf.relu(layer4.apply(tf.relu(layer3.apply(x) as tf.Tensor)) as tf.Tensor));
  {
    // The same, as a `using` declaration: the block ends with the enclosing scope.
    using _block = new Block({ ipuId: 3 });
    x = tf.softmax(x, 1);
  }
  return x;
}

const opts = new Options().deviceIterations(4);
const model = inferenceModel(network, { options: opts });
const out = (await model(tf.randomUniform([4, 5], 0, 1, 'float32', 1))) as tf.Tensor;
out.print();
console.log(model.planText());
