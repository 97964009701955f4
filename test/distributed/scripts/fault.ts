/**
 * Trains a small model for 12 steps on 2 instances (under mpiexec), each
 * step's global batch of 8 samples split between them, checkpointing the
 * host weights every 4 steps; prints one JSON line per instance.
 *
 *   fault.ts recoverable    an undisturbed run, then a run in which instance 1 plants
 *                           an IPU_RESET that fires in step 6; every instance recovers
 *                           (detach, attach, back to the last checkpoint) and goes on
 *   fault.ts unrecoverable  instance 1 plants a MEMORY_ERROR that fires in step 2
 *   fault.ts killed         instance 1 kills itself (SIGKILL) before step 5
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { mpiWorld } from '../../../lib/distributed/mpi_communicator.js';
import { RecoverableError } from '../../../lib/common/errors.js';
import { trainingModel } from '../../../lib/executor/model_wrappers.js';
import { SimulatedErrorCode } from '../../../lib/device/simulated_errors.js';
import { Options } from '../../../lib/options/options.js';
import { SGD } from '../../../optim/sgd.js';

const mode = process.argv[2];
await initBackend();
const world = mpiWorld();
const { rank, size } = world;
const steps = 12;
const checkpointEvery = 4;
// This instance's half of each step's 8 samples.
const batches = Array.from({ length: steps }, (_, i) =>
  [tf.randomNormal([8, 6], 0, 1, 'float32', 2 * i + 1), tf.randomNormal([8, 2], 0, 1, 'float32', 2 * i + 2)].map((t) => t.slice([4 * rank], [4])),
);

function build() {
  const model = tf.sequential({
    layers: [
      tf.layers.dense({ units: 8, inputShape: [6], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
      tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
    ],
  });
  const options = new Options().randomSeed(3);
  options.Distributed.configureProcessId(rank, size);
  return { model, executor: trainingModel(model, { options, loss: 'meanSquaredError', optimizer: new SGD(model, { lr: 0.05 }) }) };
}

/** What an instance saw of a fault. */
interface FaultSeen {
  step: number;
  type: string;
  message: string;
  recoveryAction?: string;
  cause?: string;
  pendingRecovery?: string;
}

/** Trains for `steps` steps; instance 1 plants `code` to fire in step `faultAt`. */
async function train(fault?: { code: SimulatedErrorCode; at: number }): Promise<{ weights: number[]; faults: FaultSeen[] }> {
  const { model, executor } = build();
  await executor.compile(batches[0]![0]!, batches[0]![1]!);
  let checkpoint = { step: 0, weights: model.getWeights().map((w) => w.clone()) };
  const faults: FaultSeen[] = [];
  let step = 0;
  while (step < steps) {
    if (rank === 1 && mode === 'killed' && step === 5) process.kill(process.pid, 'SIGKILL');
    if (rank === 1 && step === fault?.at && faults.length === 0) {
      executor.device.insertSimulatedError(fault.code, executor.device.getSimulatedErrorLocations('B0')[0]!);
    }
    try {
      const [output, loss] = await executor(batches[step]![0]!, batches[step]![1]!);
      tf.dispose([output as tf.Tensor, loss]);
    } catch (error) {
      const e = error as Error & { type?: string; recoveryAction?: string; cause?: unknown };
      faults.push({
        step,
        type: e.type ?? e.name,
        message: e.message,
        ...(e.recoveryAction ? { recoveryAction: e.recoveryAction } : {}),
        ...(e.cause instanceof Error ? { cause: e.cause.message } : {}),
        ...(executor.device.pendingRecovery ? { pendingRecovery: executor.device.pendingRecovery } : {}),
      });
      if (!(error instanceof RecoverableError)) return { weights: [], faults };
      executor.detachFromDevice();
      executor.attachToDevice();
      model.setWeights(checkpoint.weights);
      executor.copyWeightsToDevice();
      step = checkpoint.step;
      continue;
    }
    step++;
    if (step % checkpointEvery === 0) {
      executor.copyWeightsToHost();
      checkpoint = { step, weights: model.getWeights().map((w) => w.clone()) };
    }
  }
  executor.copyWeightsToHost();
  return { weights: model.getWeights().flatMap((w) => [...(w.dataSync() as Float32Array)]), faults };
}

if (mode === 'recoverable') {
  const undisturbed = await train();
  const recovered = await train({ code: SimulatedErrorCode.IPU_RESET, at: 6 });
  console.log(JSON.stringify({ rank, undisturbed: undisturbed.weights, recovered: recovered.weights, faults: recovered.faults }));
} else if (mode === 'unrecoverable') {
  const { faults } = await train({ code: SimulatedErrorCode.MEMORY_ERROR, at: 2 });
  console.log(JSON.stringify({ rank, faults }));
} else {
  console.log(JSON.stringify({ rank, ...(await train()) }));
}
