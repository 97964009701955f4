/**
 * The training step of ResNet-50 (25.6 M parameters, bottleneck blocks,
 * batch norm) at 128×128, micro-batch 2, SGD: plain tfjs on the active
 * backend (the baseline) and poptfjs, at the same micro-batch.
 */
import { currentBackend, tf } from 'poptfjs';
import { medianOf, type Benchmark } from './benchmark.js';
import { PROBE_MODELS } from './host_memory_probe.js';
import { plainTfjsCase, type TrainingProblem } from './plain_tfjs_step.js';
import { POPTFJS_CASE, poptfjsTrainingCase } from './poptfjs_training_step.js';

const IMAGE = 128;
const BATCH = 2;
const CLASSES = 1000;

const RESNET50: TrainingProblem = {
  model: () => PROBE_MODELS['resnet-50']!(IMAGE),
  batch() {
    const x = tf.randomUniform([BATCH, IMAGE, IMAGE, 3], -1, 1, 'float32', 1);
    const y = tf.oneHot(tf.randomUniform([BATCH], 0, CLASSES, 'int32', 2), CLASSES).toFloat();
    return { x, y };
  },
};

/** The ResNet-50 benchmark (a step takes seconds: a few rounds). */
export function resnet50TrainingBenchmark(rounds: number): Benchmark {
  const backend = currentBackend();
  return {
    title: `ResNet-50 training step, ${IMAGE}×${IMAGE}×3, micro-batch ${BATCH}, SGD`,
    rounds,
    warmup: 1,
    async cases() {
      return [await plainTfjsCase(RESNET50, backend), poptfjsTrainingCase(RESNET50)];
    },
    verdict(results) {
      const ratio = medianOf(results, `${POPTFJS_CASE} (${backend})`)! / medianOf(results, `tfjs ${backend} (optimizer.minimize)`)!;
      return `poptfjs / plain tfjs = ${ratio.toFixed(3)}`;
    },
  };
}
