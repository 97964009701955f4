/**
 * Compile time of a 200-layer model: 200 dense layers of width 32 (relu),
 * batch 16, compiled by `inferenceModel` (the baseline) and by
 * `trainingModel` with SGD and a mean-squared-error loss, executable caching
 * off, from the model to a runnable executable (trace, patterns, placement,
 * schedule, hardware analysis). Each step wraps and compiles a new model.
 * Target: under 1 s.
 */
import { inferenceModel, optim, Options, tf, trainingModel } from 'poptfjs';
import { medianOf, targetVerdict, type Benchmark } from './benchmark.js';
import type { BenchCase } from './side_by_side.js';

/** Layers of the benchmark's model. */
export const LAYERS = 200;
/** Their width. */
export const WIDTH = 32;
/** The batch it is compiled for. */
export const BATCH = 16;

/** The benchmark's model: {@link LAYERS} dense layers of {@link WIDTH}, relu. */
export function deepModel(): tf.Sequential {
  const model = tf.sequential();
  model.add(tf.layers.dense({ units: WIDTH, inputShape: [WIDTH], activation: 'relu' }));
  for (let i = 1; i < LAYERS; i++) model.add(tf.layers.dense({ units: WIDTH, activation: 'relu' }));
  return model;
}

/** A case compiling a new model per step; reports the executor's own compilation time. */
function compileCase(name: string, training: boolean): BenchCase {
  const x = tf.randomNormal([BATCH, WIDTH], 0, 1, 'float32', 3);
  const y = tf.randomNormal([BATCH, WIDTH], 0, 1, 'float32', 4);
  return {
    name,
    async step() {
      const model = deepModel();
      const options = new Options().enableExecutableCaching(null);
      const executor = training
        ? trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.01 }), options })
        : inferenceModel(model, { options });
      await (training ? executor.compile(x, y) : executor.compile(x));
      const ms = executor.compilationTime() * 1000;
      executor.destroy();
      model.dispose();
      return ms;
    },
  };
}

const TRAINING_CASE = `trainingModel compile`;

/** The compile-time benchmark. */
export function compileTimeBenchmark(rounds: number): Benchmark {
  return {
    title: `Compile time of a ${LAYERS}-layer model (dense ${WIDTH}, relu), batch ${BATCH}, ms`,
    rounds,
    warmup: 1,
    async cases() {
      return [compileCase('inferenceModel compile', false), compileCase(TRAINING_CASE, true)];
    },
    verdict(results) {
      const seconds = medianOf(results, TRAINING_CASE)! / 1000;
      return targetVerdict(`${LAYERS}-layer training compile, s`, seconds, 2, '< 1 s', seconds < 1);
    },
  };
}
