/**
 * Pipelined training on simulated IPUs that run in worker threads
 * (`opts.parallelIpus(true)`) against the same IPUs run one after another
 * in-process. The model is a stack of equal, compute-heavy stages, each a
 * dense layer 1024 → 1024 (relu; micro-batch 256, so compute dominates what
 * crosses threads); the first stage starts with a narrow input projection
 * (64 → 1024), so its dense layer computes its input gradient like the
 * others' (three 1024-wide matmuls per stage and micro-batch). It is trained
 * with SGD and a mean-squared-error loss over {@link ACCUMULATION} gradient
 * accumulation micro-batches per step, which keeps the pipeline bubble small:
 *
 * - 4 stages on 1 IPU (the baseline), pipelined on 4 IPUs in-process, and
 *   pipelined on 4 worker IPUs;
 * - 2 stages on 1 IPU and pipelined on 2 worker IPUs.
 *
 * Target: on a 2-core machine, 2 worker IPUs train the 2-stage model at
 * least 1.6× as fast as 1 IPU. The wasm backend computes each kernel on all
 * cores (in-process) and the worker IPUs share those threads, so on 2 cores
 * this compares two threads inside kernels with one thread per stage.
 */
import { BeginBlock, Options, PipelinedExecution, Stage, optim, tf, trainingModel, wasmThreads, type PoplarExecutor } from 'poptfjs';
import { medianOf, targetVerdict, type Benchmark } from './benchmark.js';
import type { BenchCase } from './side_by_side.js';

/** Width of every stage's layer. */
const WIDTH = 1024;
/** Width of the input. */
const INPUT_WIDTH = 64;
/** Samples per micro-batch. */
const MICRO_BATCH = 256;
/** Micro-batches per step (gradient accumulation). */
const ACCUMULATION = 32;

/**
 * An input projection, then `stages` dense layers of {@link WIDTH}; with
 * `ipus`, stage `i` is block `s<i>` on IPU `i` (the projection in stage 0).
 */
function stagedModel(stages: number, ipus: boolean): tf.Sequential {
  const init = (seed: number) => tf.initializers.glorotUniform({ seed });
  const model = tf.sequential();
  const projection = tf.layers.dense({ units: WIDTH, inputShape: [INPUT_WIDTH], activation: 'relu', kernelInitializer: init(49) });
  model.add(projection);
  if (ipus) BeginBlock(projection, { userId: 's0', ipuId: 0 });
  for (let i = 0; i < stages; i++) {
    const layer = tf.layers.dense({ units: WIDTH, activation: i < stages - 1 ? 'relu' : 'linear', kernelInitializer: init(50 + i) });
    model.add(layer);
    if (ipus && i > 0) BeginBlock(layer, { userId: `s${i}`, ipuId: i });
  }
  return model;
}

/** A case training the `stages`-stage model on 1 IPU, or pipelined on `stages` IPUs (in-process or on worker threads). */
function trainingCase(name: string, stages: number, placement: '1 IPU' | 'in-process' | 'workers', executors: Map<string, PoplarExecutor>): BenchCase {
  const pipelined = placement !== '1 IPU';
  const model = stagedModel(stages, pipelined);
  const opts = new Options().parallelIpus(placement === 'workers');
  opts.Training.gradientAccumulation(ACCUMULATION);
  if (pipelined) opts.setExecutionStrategy(PipelinedExecution(...Array.from({ length: stages }, (_, i) => Stage(`s${i}`).ipu(i))));
  const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 1e-4 }) });
  executors.set(name, executor);
  const x = tf.randomNormal([MICRO_BATCH * ACCUMULATION, INPUT_WIDTH], 0, 1, 'float32', 1);
  const y = tf.randomNormal([MICRO_BATCH * ACCUMULATION, WIDTH], 0, 1, 'float32', 2);
  return {
    name,
    async step() {
      const [out, loss] = await executor(x, y);
      loss.dataSync();
      tf.dispose([out as tf.Tensor, loss]);
    },
  };
}

const FOUR_ONE = '4 stages, 1 IPU';
const FOUR_IN_PROCESS = '4 stages, 4 IPUs in-process';
const FOUR_WORKERS = '4 stages, 4 worker IPUs';
const TWO_ONE = '2 stages, 1 IPU';
const TWO_WORKERS = '2 stages, 2 worker IPUs';

/** The benchmark, `rounds` timed rounds. */
export function pipelinedIpusBenchmark(rounds: number): Benchmark {
  const executors = new Map<string, PoplarExecutor>();
  return {
    title: `Pipelined IPUs on worker threads: training step, ${WIDTH}-wide dense stages, micro-batch ${MICRO_BATCH} × ${ACCUMULATION} accumulation, SGD`,
    rounds,
    warmup: 2,
    async cases() {
      return [
        trainingCase(FOUR_ONE, 4, '1 IPU', executors),
        trainingCase(FOUR_IN_PROCESS, 4, 'in-process', executors),
        trainingCase(FOUR_WORKERS, 4, 'workers', executors),
        trainingCase(TWO_ONE, 2, '1 IPU', executors),
        trainingCase(TWO_WORKERS, 2, 'workers', executors),
      ];
    },
    verdict(results) {
      const two = medianOf(results, TWO_ONE)! / medianOf(results, TWO_WORKERS)!;
      const fourVsInProcess = medianOf(results, FOUR_IN_PROCESS)! / medianOf(results, FOUR_WORKERS)!;
      const fourVsOne = medianOf(results, FOUR_ONE)! / medianOf(results, FOUR_WORKERS)!;
      const overlap = (name: string) => {
        const executor = executors.get(name);
        return (executor?.isCompiled() ? executor.measuredOverlap()?.overlap.toFixed(2) : undefined) ?? '-';
      };
      const verdict = [
        targetVerdict('throughput of 2 worker IPUs / 1 IPU (2 stages)', two, 2, '≥ 1.6', two >= 1.6),
        `throughput of 4 worker IPUs / 4 IPUs in-process = ${fourVsInProcess.toFixed(2)}, / 1 IPU = ${fourVsOne.toFixed(2)}`,
        `measured overlap (sum of worker busy time / wall time, last step): 2 worker IPUs ${overlap(TWO_WORKERS)}, 4 worker IPUs ${overlap(FOUR_WORKERS)}`,
        `in-process IPUs compute on ${wasmThreads()} wasm thread(s); the worker IPUs share them, at least one each`,
      ].join('; ');
      for (const executor of executors.values()) executor.destroy();
      return verdict;
    },
  };
}
