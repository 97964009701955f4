/**
 * Serial and parallel phased execution (PopTorch's two snippets): six blocks
 * in three phases of two stages each, trained for a few steps.
 * - Serial: every phase on IPUs 0 and 1 (A, B, C on IPU 0; A2, B2, C2 on IPU 1).
 * - Parallel: even phases on IPUs 0 and 2, odd phases on IPUs 1 and 3.
 *
 * Run: npx tsx examples/phased-execution.ts
 */
import { Block, Liveness, Options, ParallelPhasedExecution, Phase, SerialPhasedExecution, Stage, tf, trainingModel } from 'poptfjs';

function sixBlockModel(ids: string[]) {
  const layers = ids.map((_, i) => tf.layers.dense({ units: 8, inputShape: [8], kernelInitializer: tf.initializers.glorotUniform({ seed: i }) }));
  return (x: tf.Tensor) => {
    ids.forEach((userId, i) => {
      x = Block.run({ userId }, () => tf.tanh(layers[i]!.apply(x) as tf.Tensor));
    });
    return x;
  };
}

const serial = SerialPhasedExecution(Phase(Stage('A'), Stage('A2')), Phase(Stage('B'), Stage('B2')), Phase(Stage('C'), Stage('C2')));
serial.phase(0).ipus(0, 1);
serial.phase(1).ipus(0, 1);
serial.phase(2).ipus(0, 1);
serial.setTensorsLiveness(Liveness.OffChipAfterFwd);

const parallel = ParallelPhasedExecution(Phase(Stage('0'), Stage('1')), Phase(Stage('2'), Stage('3')), Phase(Stage('4'), Stage('5')));
parallel.phase(0).ipus(0, 2);
parallel.phase(1).ipus(1, 3);
parallel.phase(2).ipus(0, 2);

const x = tf.randomNormal([2, 8], 0, 1, 'float32', 5);
const target = tf.randomNormal([2, 8], 0, 1, 'float32', 6);
for (const [name, strategy, ids] of [
  ['serial', serial, ['A', 'A2', 'B', 'B2', 'C', 'C2']],
  ['parallel', parallel, ['0', '1', '2', '3', '4', '5']],
] as const) {
  const model = trainingModel(sixBlockModel([...ids]), { options: new Options().setExecutionStrategy(strategy), loss: 'meanSquaredError' });
  const losses: string[] = [];
  for (let step = 0; step < 3; step++) {
    const [, loss] = await model(x, target);
    losses.push(loss.dataSync()[0]!.toFixed(5));
  }
  console.log(`${name} phased losses: ${losses.join(' ')}`);
  console.log(model.planText());
}
