/**
 * Phases (PopTorch's Phase example): three blocks A, B and C. Stages of one
 * phase run in parallel on their IPUs; blocks regrouped in a single stage run
 * one after the other on one IPU.
 *
 * Run: npx tsx examples/phases.ts
 */
import { Block, Options, Phase, SerialPhasedExecution, Stage, inferenceModel, tf } from 'poptfjs';

function model(x: tf.Tensor, y: tf.Tensor): tf.Tensor[] {
  const c = Block.run({ userId: 'A' }, () => tf.add(x, x));
  const d = Block.run({ userId: 'B' }, () => tf.add(y, y));
  const e = Block.run({ userId: 'C' }, () => tf.mul(x, 3));
  return [c, d, e];
}

// A on IPU 0, then B and C regrouped in a single stage: two phases on one IPU.
const regrouped = SerialPhasedExecution(Phase(Stage('A').ipu(0)), Phase(Stage('B', 'C').ipu(0)));
// A, B and C as three stages of one phase: they run in parallel on three IPUs (four reserved).
const parallel = SerialPhasedExecution(Phase(Stage('A').ipu(0), Stage('B').ipu(1), Stage('C').ipu(2)));

for (const [name, strategy, opts] of [
  ['regrouped', regrouped, new Options()],
  ['parallel', parallel, new Options().autoRoundNumIPUs(true)],
] as const) {
  const executor = inferenceModel(model, { options: opts.setExecutionStrategy(strategy) });
  const outputs = (await executor(tf.tensor1d([1, 2]), tf.tensor1d([3, 4]))) as tf.Tensor[];
  console.log(`${name}: ${strategy}`);
  console.log(`outputs: ${outputs.map((t) => `[${Array.from(t.dataSync()).join(', ')}]`).join(' ')}`);
  console.log(executor.planText());
}
