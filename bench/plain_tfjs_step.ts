/**
 * The plain tfjs training step the poptfjs cases are measured against:
 * `optimizer.minimize` of the categorical cross-entropy on one batch, on a
 * given backend, with the model and the data created on that backend.
 */
import { tf } from 'poptfjs';
import type { BenchCase } from './side_by_side.js';

/** What a training benchmark trains: a model and one batch, made on the active backend. */
export interface TrainingProblem {
  /** A new model, with seeded weights (the same at every call). */
  model(): tf.LayersModel;
  /** The batch: inputs `x` and one-hot targets `y`, seeded. */
  batch(): { readonly x: tf.Tensor; readonly y: tf.Tensor };
}

/**
 * A case stepping plain tfjs SGD (lr 0.01) on `backend` (made active at each
 * step, so cases on several backends can take turns), at most `rounds`
 * timed rounds.
 */
export async function plainTfjsCase(problem: TrainingProblem, backend: string, rounds?: number): Promise<BenchCase> {
  const active = tf.getBackend();
  await tf.setBackend(backend);
  const model = problem.model();
  const { x, y } = problem.batch();
  const optimizer = tf.train.sgd(0.01);
  await tf.setBackend(active);
  return {
    name: `tfjs ${backend} (optimizer.minimize)`,
    ...(rounds !== undefined ? { rounds } : {}),
    async step() {
      await tf.setBackend(backend);
      const loss = optimizer.minimize(() => tf.mean(tf.metrics.categoricalCrossentropy(y, model.apply(x, { training: true }) as tf.Tensor)) as tf.Scalar, true)!;
      loss.dataSync();
      loss.dispose();
    },
  };
}
