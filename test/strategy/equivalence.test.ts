/**
 * The heart of the multi-IPU strategies: any strategy, placement and
 * replication gives the same outputs, losses and weight updates as the
 * single-IPU run over the same samples with the same effective batch.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import {
  BeginBlock,
  Options,
  ParallelPhasedExecution,
  Phase,
  PipelinedExecution,
  SerialPhasedExecution,
  ShardedExecution,
  Stage,
  inferenceModel,
  optim,
  trainingModel,
  type ExecutionStrategy,
} from 'poptfjs';
import { expectClose } from '../helpers.js';

const BLOCKS = ['b0', 'b1', 'b2', 'b3'];

/** A model of four blocks: a conv block, then dense layers. Same weights for the same seed. */
function blockModel(annotate: boolean): tf.Sequential {
  const init = (s: number) => tf.initializers.glorotUniform({ seed: 100 + s });
  const model = tf.sequential({
    layers: [
      tf.layers.conv2d({ inputShape: [6, 6, 1], filters: 3, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: init(0) }),
      tf.layers.maxPooling2d({ poolSize: 2 }),
      tf.layers.flatten(),
      tf.layers.dense({ units: 8, activation: 'relu', kernelInitializer: init(1) }),
      tf.layers.dense({ units: 6, activation: 'tanh', kernelInitializer: init(2) }),
      tf.layers.dense({ units: 3, kernelInitializer: init(3) }),
    ],
  });
  if (annotate) [0, 2, 4, 5].forEach((layer, i) => BeginBlock(model.layers[layer]!, { userId: BLOCKS[i]! }));
  return model;
}

interface StrategyCase {
  name: string;
  strategy: () => ExecutionStrategy;
  /** Minimum gradient accumulation (pipeline depth) and device iterations for inference. */
  minAccumulation: number;
  minIterations: number;
}

function phased<T extends ReturnType<typeof SerialPhasedExecution> | ReturnType<typeof ParallelPhasedExecution>>(s: T, ipus: number[][]): T {
  ipus.forEach((group, p) => s.phase(p).ipus(...group));
  return s;
}

const STRATEGIES: StrategyCase[] = [
  { name: 'pipelined on 2 IPUs', strategy: () => PipelinedExecution(Stage('b0', 'b1').ipu(0), Stage('b2', 'b3').ipu(1)), minAccumulation: 3, minIterations: 2 },
  { name: 'pipelined on 4 IPUs', strategy: () => PipelinedExecution(...BLOCKS.map((b, i) => Stage(b).ipu(i))), minAccumulation: 7, minIterations: 4 },
  { name: 'sharded on 4 IPUs', strategy: () => ShardedExecution(...BLOCKS.map((b, i) => Stage(b).ipu(i))), minAccumulation: 1, minIterations: 1 },
  {
    name: 'serial phased on 2 IPUs',
    strategy: () =>
      phased(SerialPhasedExecution(Phase(Stage('b0'), Stage('b1')), Phase(Stage('b2'), Stage('b3'))), [
        [0, 1],
        [0, 1],
      ]),
    minAccumulation: 1,
    minIterations: 1,
  },
  {
    name: 'parallel phased on 4 IPUs',
    strategy: () =>
      phased(ParallelPhasedExecution(Phase(Stage('b0'), Stage('b1')), Phase(Stage('b2'), Stage('b3'))), [
        [0, 2],
        [1, 3],
      ]),
    minAccumulation: 1,
    minIterations: 1,
  },
];

/** A small seeded generator for drawing combinations. */
function draw(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function options(c: { replicas: number; iterations: number; accumulation?: number }, strategy?: ExecutionStrategy): Options {
  const o = new Options().deviceIterations(c.iterations).replicationFactor(c.replicas).outputMode('All');
  if (c.accumulation) o.Training.gradientAccumulation(c.accumulation);
  if (strategy) o.setExecutionStrategy(strategy);
  return o;
}

describe('every strategy equals the single-IPU run', () => {
  const pick = draw(2024);
  for (const s of STRATEGIES) {
    for (let k = 0; k < 3; k++) {
      // The first combination of each strategy replicates and iterates; the others are drawn.
      const combo = {
        replicas: k === 0 || pick() < 0.5 ? 2 : 1,
        iterations: k === 0 || pick() < 0.5 ? 2 : 1,
        accumulation: s.minAccumulation + (pick() < 0.5 ? 0 : 1),
        micro: pick() < 0.5 ? 1 : 2,
      };
      it(`training, ${s.name}: replicas ${combo.replicas}, deviceIterations ${combo.iterations}, gradientAccumulation ${combo.accumulation}, micro-batch ${combo.micro}`, async () => {
        const batch = combo.micro * combo.replicas * combo.iterations * combo.accumulation;
        const x = tf.randomNormal([batch, 6, 6, 1], 0, 1, 'float32', k + 1);
        const y = tf.randomNormal([batch, 3], 0, 1, 'float32', k + 2);
        const split = blockModel(true);
        const single = blockModel(false);
        const splitRun = trainingModel(split, {
          options: options(combo, s.strategy()),
          loss: 'meanSquaredError',
          optimizer: new optim.SGD(split, { lr: 0.05, momentum: 0.5 }),
        });
        const singleRun = trainingModel(single, { options: options(combo), loss: 'meanSquaredError', optimizer: new optim.SGD(single, { lr: 0.05, momentum: 0.5 }) });
        for (let call = 0; call < 2; call++) {
          const [out, loss] = await splitRun(x, y);
          const [refOut, refLoss] = await singleRun(x, y);
          expectClose(out as tf.Tensor, refOut as tf.Tensor, 1e-5, 1e-6);
          expectClose(loss, refLoss, 1e-5, 1e-6);
        }
        expect(splitRun.executable.placement.strategy).toBe(s.strategy().type);
        splitRun.copyWeightsToHost();
        singleRun.copyWeightsToHost();
        split.getWeights().forEach((w, i) => expectClose(w, single.getWeights()[i]!, 1e-5, 1e-6));
      });
    }
    it(`inference, ${s.name}`, async () => {
      const combo = { replicas: 2, iterations: Math.max(2, s.minIterations) };
      const x = tf.randomNormal([combo.replicas * combo.iterations * 2, 6, 6, 1], 0, 1, 'float32', 9);
      const out = (await inferenceModel(blockModel(true), { options: options(combo, s.strategy()) })(x)) as tf.Tensor;
      expectClose(out, blockModel(false).predict(x) as tf.Tensor, 1e-5, 1e-6);
    });
  }
});
