/**
 * Stages from blocks: `AutoStage.SameAsIpu` (the default) gives each block the
 * stage of its IPU, so blocks on IPUs 0, 1, 0 break the pipeline's order;
 * `AutoStage.AutoIncrement` numbers the blocks in order and the model compiles.
 * Explicit `Stage`s group blocks by their ids.
 *
 * Run: npx tsx examples/auto-stage.ts
 */
import { AutoStage, Block, Options, PipelinedExecution, Stage, inferenceModel, tf } from 'poptfjs';

const layers = [0, 1, 2, 3].map(() => tf.layers.dense({ units: 4, inputShape: [4] }));

function threeBlocks(x: tf.Tensor): tf.Tensor {
  Block.useAutoId();
  [0, 1, 0].forEach((ipuId, i) => {
    x = Block.run({ ipuId }, () => tf.relu(layers[i]!.apply(x) as tf.Tensor));
  });
  return x;
}

const input = tf.ones([4, 4]);
try {
  await inferenceModel(threeBlocks, { options: new Options().deviceIterations(4) })(input);
} catch (error) {
  console.log(`SameAsIpu: ${(error as Error).message}`);
}
const incremented = inferenceModel(threeBlocks, { options: new Options().deviceIterations(4).setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement)) });
await incremented(input);
console.log(`AutoIncrement: ${incremented.executable.placement.stages.map((s) => `stage ${s.stageId} on IPU ${s.ipu}`).join(', ')}`);

function fourNamedBlocks(x: tf.Tensor): tf.Tensor {
  ['A', 'B', 'C', 'D'].forEach((userId, i) => {
    x = Block.run({ userId }, () => tf.relu(layers[i]!.apply(x) as tf.Tensor));
  });
  return x;
}
const grouped = inferenceModel(fourNamedBlocks, {
  options: new Options().deviceIterations(2).setExecutionStrategy(PipelinedExecution(Stage('A', 'B'), Stage('C', 'D'))),
});
await grouped(tf.ones([2, 4]));
console.log(grouped.planText());
