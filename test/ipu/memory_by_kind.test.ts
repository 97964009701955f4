/**
 * The memory plan, kind by kind, against figures computed by hand.
 *
 * The model: four dense layers without bias, 32 → 64 → 96 → 128 → 16, trained
 * with MSE and Adam over 8 micro-batches of 2, pipelined over 1, 2 or 4 IPUs
 * (layer i on IPU ⌊i·n/4⌋). The target has one tile per IPU, so a matrix
 * product's temporary memory is exactly its activation operands brought onto
 * that tile (a weight is laid out for the product and is not copied).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { BeginBlock, GC200, Options, PipelinedExecution, type RecomputationType, TensorLocationSettings, half, optim, trainingModel, type IpuMemoryUse } from 'poptfjs';

const D = [32, 64, 96, 128, 16];
const MB = 2;
const GA = 8;
const ONE_TILE = { tiles: 1, memoryPerTile: 16 * 2 ** 20 };
/** Elements of layer i's weight. */
const W = (i: number) => D[i]! * D[i + 1]!;
/** Adam keeps two float32 moments per element; gradients accumulate in float32. */
const ADAM_STATE = 2 * 4;
const ACCUMULATOR = 4;
/** Vertex code per kernel and tile, and exchange buffers as a fraction of the activations. */
const CODE = 20;
const EXCHANGE = 0.05;
/**
 * The constants of MSE's gradient (tfjs's mean gradient makes a [2, 16] tensor of ones, a [2] one and three scalars)
 * are fills of one value that only the backward pass reads: a broadcast of one element, no memory.
 */
const LOSS_CONSTANTS = 0;
/**
 * Kernels (views aside) whose code MSE adds to the last IPU: Sub, Multiply and two Means forward; its gradient is
 * Multiply (loss scale), Multiply and RealDiv per Mean, two Multiplies and their Add for the square: 12. Kernels with
 * the same kernel, attributes, shapes and types share their code (PopART outlines them, `enableOutlining` being on
 * by default): the square's two gradient Multiplies (float32 [2,16] · [2,16], the incoming gradient times the
 * difference) are one, and in float32 the forward square (the difference times itself) is the same kernel again.
 * So 12 - 2 in float32 and 12 - 1 in float16, where the forward square multiplies two float16 tensors.
 */
const LOSS_KERNELS = (float16: boolean) => 4 + 1 + 2 * 2 + 3 - (float16 ? 1 : 2);

interface Case {
  ipus: 1 | 2 | 4;
  float16?: boolean;
  recomputation?: RecomputationType;
  optimizer?: 'sharded' | 'off chip';
}

async function plan(c: Case): Promise<readonly IpuMemoryUse[]> {
  const model = tf.sequential({
    layers: D.slice(1).map((units, i) => tf.layers.dense({ units, useBias: false, inputShape: i === 0 ? [D[0]!] : undefined, name: `layer${i}` })),
  });
  model.layers.forEach((layer, i) => BeginBlock(layer, { ipuId: Math.floor((i * c.ipus) / 4) }));
  if (c.float16) half(model);
  const replicas = c.optimizer === 'sharded' ? 2 : 1;
  const opts = new Options()
    .ipuTarget(ONE_TILE)
    .autoRecomputation(c.recomputation ?? 'None')
    .replicationFactor(replicas);
  opts.Training.gradientAccumulation(GA);
  opts.setExecutionStrategy(PipelinedExecution());
  if (c.optimizer === 'sharded') opts.TensorLocations.setOptimizerLocation(new TensorLocationSettings().useReplicatedTensorSharding(true));
  if (c.optimizer === 'off chip') opts.TensorLocations.setOptimizerLocation(new TensorLocationSettings().useOnChipStorage(false));
  const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: new optim.Adam(model, { lr: 1e-3 }) });
  const x = tf.zeros([MB * GA * replicas, D[0]!]);
  const y = tf.zeros([MB * GA * replicas, D[4]!]);
  await executor.compile(c.float16 ? half(x) : x, c.float16 ? half(y) : y);
  const { ipus } = executor.executable.hardware.memory;
  executor.destroy();
  model.dispose();
  return ipus;
}

/** What one IPU should hold, computed by hand. */
interface Expected {
  weights: number;
  optimizer: number;
  accumulators: number;
  inFlight: number;
  stashed: number;
  working: number;
  temporary: number;
  kernels: number;
  streamedOptimizer?: number;
}

function check(actual: IpuMemoryUse, e: Expected): void {
  expect(actual.byKind.weights).toBe(e.weights);
  expect(actual.byKind['optimizer state']).toBe(e.optimizer);
  expect(actual.byKind['gradient accumulators']).toBe(e.accumulators);
  expect(actual.peak.microBatchesInFlight).toBe(e.inFlight);
  expect(actual.peak.stashed).toBe(e.stashed);
  expect(actual.peak.working).toBe(e.working);
  expect(actual.byKind.activations).toBe(e.stashed + e.working);
  expect(actual.byKind.temporary).toBe(e.temporary);
  expect(actual.byKind['code and exchange']).toBe(e.kernels * CODE + Math.round(EXCHANGE * (e.stashed + e.working)));
  expect(actual.used).toBe(e.weights + e.optimizer + e.accumulators + e.stashed + e.working + e.temporary + actual.byKind['code and exchange']);
  expect(actual.streaming.byKind['optimizer state']).toBe(e.streamedOptimizer ?? 0);
}

/**
 * The expected memory of each IPU. `f` is the bytes of a weight or activation element; `act(i)` the bytes of the
 * activation that enters layer i (one micro-batch). A pipeline of S stages keeps 2(S - s) - 1 micro-batches in flight
 * on stage s. Each IPU's peak is the weight-gradient product of its largest layer, in the backward pass of the oldest
 * micro-batch in flight.
 */
function expected(c: Case): Expected[] {
  const f = c.float16 ? 2 : 4;
  const act = (i: number) => MB * D[i]! * f;
  const sharded = c.optimizer === 'sharded' ? 2 : 1;
  const resident = (layers: number[], last: boolean) => {
    const state = layers.reduce((s, i) => s + (W(i) * ADAM_STATE) / sharded, 0);
    const offChip = c.optimizer === 'off chip';
    return {
      weights: layers.reduce((s, i) => s + W(i) * f, 0) + (last ? LOSS_CONSTANTS : 0),
      // Off chip, only the state of the weight being updated (the largest) is on chip.
      optimizer: offChip ? Math.max(...layers.map((i) => W(i) * ADAM_STATE)) : state,
      accumulators: layers.reduce((s, i) => s + W(i) * ACCUMULATOR, 0),
      ...(offChip ? { streamedOptimizer: state } : {}),
    };
  };
  const recomputeAll = c.recomputation === 'RecomputeAll';
  if (c.ipus === 4) {
    return [0, 1, 2, 3].map((s) => {
      const inFlight = 2 * (4 - s) - 1;
      return {
        ...resident([s], s === 3),
        inFlight,
        // Each micro-batch in flight keeps the layer's input for its weight gradient.
        stashed: inFlight * act(s),
        // The weight gradient being made; the gradient that came in (from the next IPU, or the loss on the last);
        // the gradient for the previous IPU (all but the first) and this step's forward output (all but the last),
        // both waiting for their copy at the end of the step.
        working: W(s) * f + act(s + 1) + (s > 0 ? act(s) : 0) + (s < 3 ? act(s + 1) : 0),
        temporary: act(s) + act(s + 1),
        // The forward product, the weight-gradient product, and the input-gradient product after the first IPU.
        kernels: 1 + 1 + (s > 0 ? 1 : 0) + (s === 3 ? LOSS_KERNELS(c.float16 === true) : 0),
      };
    });
  }
  if (c.ipus === 2) {
    return [
      {
        ...resident([0, 1], false),
        inFlight: 3,
        // Layers 0 and 1 keep their inputs; recomputation keeps the stage's input only and remakes layer 1's
        // input, which is live (as a working value) when layer 1's gradient is made.
        stashed: 3 * (recomputeAll ? act(0) : act(0) + act(1)),
        working: W(1) * f + act(1) + act(2) + act(2) + (recomputeAll ? act(1) : 0),
        temporary: act(1) + act(2),
        kernels: 2 + 3,
      },
      {
        ...resident([2, 3], true),
        inFlight: 1,
        // Layer 2's gradient is made after layer 3's, whose input is gone by then.
        stashed: act(2),
        working: W(2) * f + act(2) + act(3),
        temporary: act(2) + act(3),
        kernels: 2 + LOSS_KERNELS(c.float16 === true) + 4,
      },
    ];
  }
  return [
    {
      ...resident([0, 1, 2, 3], true),
      inFlight: 1,
      stashed: recomputeAll ? act(0) : act(0) + act(1) + act(2),
      // Recomputed, the inputs of layers 1 and 2 are remade before the backward pass and are working values.
      working: W(2) * f + act(2) + act(3) + (recomputeAll ? act(1) + act(2) : 0),
      temporary: act(2) + act(3),
      kernels: 4 + LOSS_KERNELS(c.float16 === true) + 7,
    },
  ];
}

describe('memory by kind, computed by hand', () => {
  const cases: Case[] = [
    { ipus: 1 },
    { ipus: 2 },
    { ipus: 4 },
    { ipus: 4, float16: true },
    { ipus: 1, float16: true },
    { ipus: 1, recomputation: 'RecomputeAll' },
    { ipus: 2, recomputation: 'RecomputeAll' },
    { ipus: 4, optimizer: 'sharded' },
    { ipus: 2, optimizer: 'sharded', float16: true },
    { ipus: 4, optimizer: 'off chip' },
  ];
  for (const c of cases) {
    const name = `${c.ipus} IPU(s), ${c.float16 ? 'float16' : 'float32'}${c.recomputation ? `, recomputation ${c.recomputation}` : ''}${c.optimizer ? `, optimizer state ${c.optimizer}` : ''}`;
    it(name, async () => {
      const actual = await plan(c);
      const e = expected(c);
      expect(actual).toHaveLength(e.length);
      actual.forEach((ipu, i) => check(ipu, e[i]!));
    });
  }
});

describe('the 4-layer MLP of 4096 → 8192 → 8192 → 4096 → 8 on four IPUs', () => {
  it('fits, with every IPU holding its own layer, its accumulator, its gradient and the stash of its micro-batches in flight', async () => {
    const widths = [4096, 8192, 8192, 4096, 8];
    const model = tf.sequential({
      layers: widths.slice(1).map((units, i) => tf.layers.dense({ units, useBias: false, inputShape: i === 0 ? [widths[0]!] : undefined, kernelInitializer: 'zeros' })),
    });
    model.layers.forEach((layer, i) => BeginBlock(layer, { ipuId: i }));
    const opts = new Options().setExecutionStrategy(PipelinedExecution());
    opts.Training.gradientAccumulation(16);
    const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.01 }) });
    await executor.compile(tf.zeros([16, widths[0]!]), tf.zeros([16, widths[4]!]));
    const { memory } = executor.executable.hardware;
    expect(memory.fits).toBe(true);
    const act = (i: number) => widths[i]! * 4;
    memory.ipus.forEach((ipu, s) => {
      const weight = widths[s]! * widths[s + 1]! * 4;
      expect(ipu.byKind.weights).toBe(weight);
      // Plain SGD keeps no state; gradients accumulate in float32.
      expect(ipu.byKind['optimizer state']).toBe(0);
      expect(ipu.byKind['gradient accumulators']).toBe(weight);
      expect(ipu.peak.microBatchesInFlight).toBe(2 * (4 - s) - 1);
      expect(ipu.peak.stashed).toBe((2 * (4 - s) - 1) * act(s));
      expect(ipu.peak.working).toBe(weight + act(s + 1) + (s > 0 ? act(s) : 0) + (s < 3 ? act(s + 1) : 0));
      // Temporary memory stays within the available memory proportion of every tile.
      expect(ipu.byKind.temporary).toBeLessThanOrEqual(0.6 * GC200.memoryPerTile * GC200.tiles);
      expect(ipu.used).toBeLessThan(ipu.capacity);
    });
    // The two 8192-wide IPUs are the fullest: a 256 MiB weight, its accumulator and its gradient.
    expect(memory.ipus[1]!.used / memory.ipus[1]!.capacity).toBeGreaterThan(0.85);
    executor.destroy();
  });
});
