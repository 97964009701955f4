/**
 * The poptfjs training step of a benchmark: `trainingModel` with SGD
 * (lr 0.01) and the categorical cross-entropy, on the active backend.
 */
import { optim, tf, trainingModel } from 'poptfjs';
import { onBackend, type TrainingProblem } from './plain_tfjs_step.js';
import type { BenchCase } from './side_by_side.js';

/** The name of the poptfjs case in the training tables. */
export const POPTFJS_CASE = 'poptfjs trainingModel';

/** A case stepping `problem` through a poptfjs `trainingModel` on the backend active now. */
export function poptfjsTrainingCase(problem: TrainingProblem): BenchCase {
  const backend = tf.getBackend();
  const model = problem.model();
  const { x, y } = problem.batch();
  const executor = trainingModel(model, { loss: 'categoricalCrossentropy', optimizer: new optim.SGD(model, { lr: 0.01 }) });
  return {
    name: `${POPTFJS_CASE} (${backend})`,
    step: () =>
      onBackend(backend, async () => {
        const [out, loss] = await executor(x, y);
        loss.dataSync();
        tf.dispose([out as tf.Tensor, loss]);
      }),
  };
}
