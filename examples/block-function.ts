/**
 * Placing functions in blocks with `BlockFunction` (PopTorch's BlockFunction
 * example): two blocks of two layers each, the softmax in a third block on
 * the second IPU.
 *
 * Run: npx tsx examples/block-function.ts
 */
import { Block, BlockFunction, Options, inferenceModel, tf } from 'poptfjs';

class Network {
  private readonly layer1 = tf.layers.dense({ units: 10, inputShape: [5] });
  private readonly layer2 = tf.layers.dense({ units: 5 });
  private readonly layer3 = tf.layers.dense({ units: 5 });
  private readonly layer4 = tf.layers.dense({ units: 5 });

  forward = (x: tf.Tensor): tf.Tensor => {
    Block.useAutoId();
    x = this.blockOne(x);
    x = this.blockTwo(x);
    return this.finalActivation(x);
  };

  private blockOne = BlockFunction({ ipuId: 0 })((x: tf.Tensor) => {
    x = tf.relu(this.layer1.apply(x) as tf.Tensor);
    return tf.relu(this.layer2.apply(x) as tf.Tensor);
  });

  private blockTwo = BlockFunction({ ipuId: 1 })((x: tf.Tensor) => {
    x = tf.relu(this.layer3.apply(x) as tf.Tensor);
    return tf.relu(this.layer4.apply(x) as tf.Tensor);
  });

  private finalActivation = BlockFunction({ ipuId: 1 })((x: tf.Tensor) => tf.softmax(x, 1));
}

const opts = new Options().deviceIterations(4);
const model = inferenceModel(new Network().forward, { options: opts });
const out = (await model(tf.randomUniform([4, 5], 0, 1, 'float32', 2))) as tf.Tensor;
out.print();
console.log(model.planText());
