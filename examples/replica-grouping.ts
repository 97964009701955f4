/**
 * Grouping a weight across replicas (PopTorch's replicaGrouping example):
 * eight replicas, the weight W split four ways between orthogonal groups of
 * two replicas (replicas 0 and 4 share the first slice, 1 and 5 the second,
 * ...), and the input split two ways between consecutive groups of four
 * replicas. Each replica computes Z = X_part @ W_slice with loss mean(Z²).
 *
 * Run: npx tsx examples/replica-grouping.ts
 */
import { CommGroupType, Options, OutputMode, VariableRetrievalMode, ops, optim, tf, trainingModel } from 'poptfjs';

const tensorShards = 4;
const dataShards = 2;
const steps = 4;

// The problem: X [24, 40], W [40, 56] split into 4 slices of [40, 14].
const X = tf.randomNormal([24, 40], 0, 1, 'float32', 100);
const Winit = tf.mul(tf.randomNormal([40, 56], 0, 1, 'float32', 101), (5 * 8) ** -0.5);
// The host weight holds one slice per group along its first dimension: [4, 40, 14].
const W = tf.variable(tf.transpose(tf.reshape(Winit, [40, tensorShards, 56 / tensorShards]), [1, 0, 2]), true, 'W');

const model = (x: tf.Tensor) => {
  const z = tf.matMul(x, W);
  return [z, ops.identityLoss(tf.square(z), 'mean')];
};

const opts = new Options()
  .replicationFactor(dataShards * tensorShards)
  .inputReplicaGrouping(tensorShards, CommGroupType.Consecutive)
  .outputMode(OutputMode.All);
const executor = trainingModel(model, { options: opts, optimizer: new optim.SGD([W], { lr: 0.01 }) });
executor.parameter('W').replicaGrouping(CommGroupType.Orthogonal, dataShards, VariableRetrievalMode.OnePerGroup);

// The host batch holds one 12-row part of X per input group.
const losses: number[] = [];
for (let step = 0; step < steps; step++) {
  const [, loss] = await executor(X);
  // The mean is taken over one part of Z on each replica: average over the replicas.
  losses.push(tf.mean(loss).dataSync()[0]!);
}
executor.copyWeightsToHost();
const Wfinal = tf.reshape(tf.transpose(W, [1, 0, 2]), [40, 56]);

console.log(`losses: ${losses.map((l) => l.toFixed(6)).join(' ')}`);
console.log(`W slices on the host: [${W.shape.join(', ')}]; final W: [${Wfinal.shape.join(', ')}], checksum ${tf.sum(Wfinal).dataSync()[0]!.toFixed(6)}`);
