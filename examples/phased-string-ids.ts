/**
 * Block ids built from strings at run time (PopTorch's f-string example):
 * blocks named `phase{n}_ipu{m}` in a loop, mapped to the phases of a
 * ParallelPhasedExecution that alternates between IPUs 0/2 and 1/3.
 *
 * Run: npx tsx examples/phased-string-ids.ts
 */
import { Block, Options, ParallelPhasedExecution, Stage, ops, tf, trainingModel } from 'poptfjs';

const N = 3;
const size = 10;
const weights = Array.from({ length: N * 6 }, (_, n) => tf.variable(tf.randomUniform([size, size], 0, 2 / size, 'float32', n), true, `phased_weight_${n}`));

function model(in0: tf.Tensor, target: tf.Tensor): tf.Tensor[] {
  let phase = 0;
  let next = 0;
  let ins = Block.run({ userId: 'phase0_ipu0' }, () => tf.split(in0, 2));
  for (let n = 0; n < N * 3; n++) {
    const out: tf.Tensor[] = [];
    for (let ipu = 0; ipu < 2; ipu++) {
      const x = ins[ipu]!;
      out.push(Block.run({ userId: `phase${phase}_ipu${ipu}` }, () => tf.relu(tf.matMul(weights[next++]!, x))));
    }
    ins = [out[1]!, out[0]!];
    // Two matmuls in the same phase.
    if (n % 3 !== 1) phase++;
  }
  return Block.run({ userId: `phase${N * 2 - 1}_ipu1` }, () => {
    const res = tf.add(ins[0]!, ins[1]!);
    return [res, ops.identityLoss(tf.abs(tf.sub(res, target)), 'mean')];
  });
}

const phases = [];
// Alternate between 0-2 and 1-3.
for (let n = 0; n < N; n++) {
  phases.push([Stage(`phase${2 * n}_ipu0`).ipu(0), Stage(`phase${2 * n}_ipu1`).ipu(2)]);
  phases.push([Stage(`phase${2 * n + 1}_ipu0`).ipu(1), Stage(`phase${2 * n + 1}_ipu1`).ipu(3)]);
}
const opts = new Options().setExecutionStrategy(ParallelPhasedExecution(...phases));
const poptfjsModel = trainingModel(model, { options: opts });
const input = tf.randomUniform([size * 2, 1], 0, 1, 'float32', 100);
const target = tf.randomUniform([size, 1], 0, 1, 'float32', 101);
await poptfjsModel.compile(input, target);
console.log(poptfjsModel.planText());
const [, loss] = await poptfjsModel(input, target);
console.log(`loss after one step: ${loss.dataSync()[0]!.toFixed(6)}`);
