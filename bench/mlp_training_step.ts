/**
 * The training step of an MLP 784-512-512-10 (batch 64, SGD lr 0.01): plain
 * tfjs on wasm (the baseline) and on cpu, poptfjs on wasm, and PyTorch when
 * available. Target: poptfjs at most 0.2× plain tfjs wasm.
 */
import { currentBackend, tf } from 'poptfjs';
import { medianOf, targetVerdict, type Benchmark } from './benchmark.js';
import { plainTfjsCase, type TrainingProblem } from './plain_tfjs_step.js';
import { POPTFJS_CASE, poptfjsTrainingCase } from './poptfjs_training_step.js';
import type { PyTorchReference } from './pytorch_reference_process.js';

const BATCH = 64;
/** The cpu backend takes ~0.5 s a step: a few rounds are enough. */
const CPU_ROUNDS = 5;

/** The MLP 784-512-512-10 on a batch of 64. */
export const MLP: TrainingProblem = {
  model() {
    const init = (seed: number) => tf.initializers.glorotUniform({ seed });
    return tf.sequential({
      layers: [
        tf.layers.dense({ units: 512, inputShape: [784], activation: 'relu', kernelInitializer: init(1) }),
        tf.layers.dense({ units: 512, activation: 'relu', kernelInitializer: init(2) }),
        tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: init(3) }),
      ],
    });
  },
  batch() {
    const x = tf.randomNormal([BATCH, 784], 0, 1, 'float32', 11);
    const y = tf.oneHot(tf.randomUniform([BATCH], 0, 10, 'int32', 12), 10).toFloat();
    return { x, y };
  },
};

/** The MLP benchmark, with `pytorch` as a peer when it runs. */
export function mlpTrainingBenchmark(pytorch: PyTorchReference | undefined, rounds: number): Benchmark {
  const backend = currentBackend();
  return {
    title: 'MLP 784-512-512-10 training step, batch 64, SGD',
    rounds,
    warmup: 3,
    async cases() {
      const cases = [await plainTfjsCase(MLP, backend), await plainTfjsCase(MLP, 'cpu', CPU_ROUNDS), poptfjsTrainingCase(MLP)];
      return pytorch ? [...cases, pytorch.stepCase('mlp')] : cases;
    },
    verdict(results) {
      const ratio = medianOf(results, `${POPTFJS_CASE} (${backend})`)! / results[0]!.medianMs;
      return targetVerdict(`poptfjs / tfjs ${backend}`, ratio, 3, '≤ 0.2', ratio <= 0.2);
    },
  };
}
