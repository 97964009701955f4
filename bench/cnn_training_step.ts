/**
 * The training step of a small CNN (conv 16 3×3 same relu → max pool 2 →
 * conv 32 3×3 same relu → flatten → dense 10 softmax, 28×28×1 inputs, batch
 * 64, SGD lr 0.01): plain tfjs on wasm (the baseline; it trains only with
 * the backward kernels poptfjs registers) and on cpu, poptfjs on wasm, and
 * PyTorch when available. Target: poptfjs at most 0.85 of PyTorch's time.
 */
import { currentBackend, tf } from 'poptfjs';
import { medianOf, targetVerdict, type Benchmark } from './benchmark.js';
import { plainTfjsCase, type TrainingProblem } from './plain_tfjs_step.js';
import { POPTFJS_CASE, poptfjsTrainingCase } from './poptfjs_training_step.js';
import type { PyTorchReference } from './pytorch_reference_process.js';

const BATCH = 64;
/** The cpu backend takes ~12 s a step: three rounds. */
const CPU_ROUNDS = 3;

/** The CNN conv16-maxpool-conv32-dense10 on a batch of 64 28×28×1 images. */
export const CNN: TrainingProblem = {
  model() {
    const init = (seed: number) => tf.initializers.glorotUniform({ seed });
    return tf.sequential({
      layers: [
        tf.layers.conv2d({ inputShape: [28, 28, 1], filters: 16, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: init(1) }),
        tf.layers.maxPooling2d({ poolSize: 2 }),
        tf.layers.conv2d({ filters: 32, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: init(2) }),
        tf.layers.flatten(),
        tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: init(3) }),
      ],
    });
  },
  batch() {
    const x = tf.randomNormal([BATCH, 28, 28, 1], 0, 1, 'float32', 1);
    const y = tf.oneHot(tf.randomUniform([BATCH], 0, 10, 'int32', 2), 10).toFloat();
    return { x, y };
  },
};

/** The CNN benchmark, with `pytorch` as a peer when it runs. */
export function cnnTrainingBenchmark(pytorch: PyTorchReference | undefined, rounds: number): Benchmark {
  const backend = currentBackend();
  return {
    title: 'CNN conv16-maxpool-conv32-dense10 training step, 28×28×1, batch 64, SGD',
    rounds,
    warmup: 2,
    async cases() {
      const cases = [await plainTfjsCase(CNN, backend), await plainTfjsCase(CNN, 'cpu', CPU_ROUNDS), poptfjsTrainingCase(CNN)];
      return pytorch ? [...cases, pytorch.stepCase('cnn')] : cases;
    },
    verdict(results) {
      if (!pytorch) return 'poptfjs / PyTorch: not measured (PyTorch skipped)';
      const ratio = medianOf(results, `${POPTFJS_CASE} (${backend})`)! / medianOf(results, pytorch.caseName)!;
      return targetVerdict('poptfjs / PyTorch', ratio, 3, '≤ 0.85', ratio <= 0.85);
    },
  };
}
