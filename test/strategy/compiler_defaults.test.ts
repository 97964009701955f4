/**
 * The values PopTorch's compiler and PopART choose when the user did not, and
 * that a value the user set wins. The sources:
 * - PopTorch: graphcore/poptorch popart_compiler/source/Compiler.cpp,
 *   `Compiler::initSession` (each default set with `setOptionIfNotSet`);
 * - PopART: graphcore/popart willow/include/popart/sessionoptions.hpp
 *   (`AccumulateOuterFragmentSettings`, `enableOutlining`) and
 *   willow/include/popart/sgd.hpp with willow/src/sgd.cpp (`SGD::createOp`:
 *   SGD0, SGD1 and SGD2).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import {
  Block,
  Options,
  Phase,
  PipelinedExecution,
  SerialPhasedExecution,
  ShardedExecution,
  Stage,
  TensorLocationSettings,
  inferenceModel,
  optim,
  trainingModel,
  type RecomputationType,
} from 'poptfjs';
import { compilerChoices } from '../../lib/strategy/compiler_defaults.js';
import type { Placement } from '../../lib/strategy/placement.js';

const WIDTH = 16;
const MICRO_BATCH = 4;
const ACCUMULATION = 8;
/** A target of one tile per IPU, so memory figures are small and exact. */
const ONE_TILE = { tiles: 1, memoryPerTile: 16 * 2 ** 20 };

/** Blocks `a` (a dense layer of 16 without bias, then two tanh) and `b` (a dense layer and tanh), each on its own IPU (or both on IPU 0). */
function twoBlocks(ipus: 1 | 2) {
  const w = [0, 1].map((i) => tf.variable(tf.randomNormal([WIDTH, WIDTH], 0, 0.1, 'float32', i + 1), true, `compiler_defaults_w${i}_${Math.random()}`));
  const model = (x: tf.Tensor) => {
    const h = Block.run({ userId: 'a', ipuId: 0 }, () => tf.tanh(tf.tanh(tf.matMul(x, w[0]!))));
    return Block.run({ userId: 'b', ipuId: ipus - 1 }, () => tf.tanh(tf.matMul(h, w[1]!)));
  };
  return { model, w };
}

interface Training {
  readonly ipus: 1 | 2;
  readonly strategy?: 'pipelined' | 'sharded';
  readonly recomputation?: RecomputationType;
  readonly optimizer?: (w: tf.Variable[]) => optim.SGD;
  readonly accumulation?: number;
}

async function compileTraining(t: Training) {
  const { model, w } = twoBlocks(t.ipus);
  const opts = new Options().ipuTarget(ONE_TILE);
  if (t.recomputation) opts.autoRecomputation(t.recomputation);
  opts.Training.gradientAccumulation(t.accumulation ?? ACCUMULATION);
  opts.setExecutionStrategy(t.strategy === 'sharded' ? ShardedExecution() : PipelinedExecution());
  const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: t.optimizer?.(w) ?? new optim.SGD(w, { lr: 0.01 }) });
  const rows = MICRO_BATCH * (t.accumulation ?? ACCUMULATION);
  await executor.compile(tf.ones([rows, WIDTH]), tf.ones([rows, WIDTH]));
  const executable = executor.executable;
  executor.destroy();
  w.forEach((v) => v.dispose());
  return executable;
}

describe("PopTorch's compiler defaults", () => {
  it('recomputes as Pipeline when a training model is pipelined over more than one IPU and no recomputation is set', async () => {
    // Compiler::initSession: "If we are pipelining we want to turn on recompute by default", with
    // setOptionIfNotSet(options.autoRecomputation, RecomputationType::Pipeline) when used_ipus.size() > 1.
    const byDefault = await compileTraining({ ipus: 2 });
    expect(byDefault.hardware.recomputation).toMatchObject({ type: 'Pipeline' });
    // Each stage stores its input only, and its backward pass re-runs the stage's product and tanh first.
    expect(byDefault.hardware.recomputation!.rerunNodes).toBeGreaterThan(0);
    // The user's choice wins, None included.
    const none = await compileTraining({ ipus: 2, recomputation: 'None' });
    expect(none.hardware.recomputation).toBeUndefined();
    // Stage a stores its input and its output (read by stage b) either way; without recomputation also the inner tanh's
    // [4,16] float32 output. Of the 3 micro-batches in flight on the first of two pipelined stages, the oldest runs its
    // backward pass at the peak (its values are working values there): the other 2 wait in the stash.
    expect(none.hardware.memory.ipus[0]!.peak.microBatchesInFlight).toBe(3);
    expect(none.hardware.memory.ipus[0]!.peak.stashed - byDefault.hardware.memory.ipus[0]!.peak.stashed).toBe(2 * MICRO_BATCH * WIDTH * 4);
    const standard = await compileTraining({ ipus: 2, recomputation: 'Standard' });
    expect(standard.hardware.recomputation).toMatchObject({ type: 'Standard' });
  });

  it('does not recompute on one IPU, or with sharded execution', async () => {
    // Only the pipelined case over used_ipus.size() > 1 sets it; PopART's own default is RecomputationType::None.
    expect((await compileTraining({ ipus: 1 })).hardware.recomputation).toBeUndefined();
    expect((await compileTraining({ ipus: 2, strategy: 'sharded' })).hardware.recomputation).toBeUndefined();
  });

  it('keeps every kind of tensor of a phased model off chip unless its storage is set', () => {
    // Compiler::initSession, ExecutionMode::Phased: location_activation, location_weight, location_optimizer and
    // location_accumulator set to useOnChipStorage(False) if not set.
    const phased = {
      strategy: 'SerialPhasedExecution',
      ipusPerReplica: 2,
      phased: { phases: 2, separateBackwardPhase: false, liveness: 'AlwaysLive', parallel: false },
    } as unknown as Placement;
    const chosen = compilerChoices(
      {
        tensorLocations: { activation: {}, weight: { useOnChipStorage: true, minElementsForOffChip: 4 }, optimizer: { minElementsForOffChip: 8 }, accumulator: {} },
        clipsGradients: false,
        gradientAccumulation: 1,
      },
      phased,
    );
    expect(chosen.tensorLocations).toEqual({
      activation: { useOnChipStorage: false },
      weight: { useOnChipStorage: true, minElementsForOffChip: 4 },
      optimizer: { useOnChipStorage: false, minElementsForOffChip: 8 },
      accumulator: { useOnChipStorage: false },
    });
    // Other strategies keep PopART's default, on chip.
    const pipelined = { strategy: 'PipelinedExecution', ipusPerReplica: 2 } as unknown as Placement;
    const locations = { activation: {}, weight: {}, optimizer: {}, accumulator: {} };
    expect(compilerChoices({ tensorLocations: locations, clipsGradients: false, gradientAccumulation: 1 }, pipelined).tensorLocations).toBe(locations);
  });

  it('streams the weights of a phased model by default, and keeps them on chip when their location says so', async () => {
    const w = [0, 1].map((i) => tf.variable(tf.randomNormal([WIDTH, WIDTH], 0, 0.1, 'float32', i + 1), true, `phased_w${i}_${Math.random()}`));
    const model = (x: tf.Tensor) => {
      const h = Block.run({ userId: 'a' }, () => tf.tanh(tf.matMul(x, w[0]!)));
      return Block.run({ userId: 'b' }, () => tf.tanh(tf.matMul(h, w[1]!)));
    };
    const weightsOnIpu0 = async (onChip: boolean) => {
      const opts = new Options().ipuTarget(ONE_TILE).setExecutionStrategy(SerialPhasedExecution(Phase(Stage('a').ipu(0)), Phase(Stage('b').ipu(0))));
      if (onChip) opts.TensorLocations.setWeightLocation(new TensorLocationSettings().useOnChipStorage(true));
      const executor = inferenceModel(model, { options: opts });
      await executor.compile(tf.ones([MICRO_BATCH, WIDTH]));
      const memory = executor.executable.hardware.memory.ipus[0]!;
      executor.destroy();
      return { onChip: memory.byKind.weights, streamed: memory.streaming.byKind.weights };
    };
    const weight = WIDTH * WIDTH * 4;
    // Off chip: each phase loads its own 16 × 16 float32 weight; both live in streaming memory.
    expect(await weightsOnIpu0(false)).toEqual({ onChip: weight, streamed: 2 * weight });
    expect(await weightsOnIpu0(true)).toEqual({ onChip: 2 * weight, streamed: 0 });
    w.forEach((v) => v.dispose());
  });

  it('updates the weights of the IPUs one after another after gradient accumulation, in parallel when gradients are clipped', async () => {
    // PopART's AccumulateOuterFragmentSettings default to AccumulateOuterFragmentSchedule::Serial ("ops are executed in
    // virtual graph ID order"); Compiler::initSession sets Scheduler when pipelining with a max_grad_norm.
    const updates = (executable: Awaited<ReturnType<typeof compileTraining>>) =>
      executable.hardware.timeline.segments.filter((s) => s.kind === 'update').map((s) => ({ ipu: s.ipu, start: s.start, end: s.end }));
    const serial = updates(await compileTraining({ ipus: 2 }));
    expect(serial.map((u) => u.ipu)).toEqual([0, 1]);
    expect(serial[1]!.start).toBeGreaterThanOrEqual(serial[0]!.end);
    const clipped = updates(await compileTraining({ ipus: 2, optimizer: (w) => new optim.SGD(w, { lr: 0.01, maxGradNorm: 1 }) }));
    expect(clipped[1]!.start).toBe(clipped[0]!.start);
    // Without accumulation there is no outer fragment: the scheduler places the updates, all at once.
    const oneStep = updates(await compileTraining({ ipus: 2, strategy: 'sharded', accumulation: 1 }));
    expect(oneStep[1]!.start).toBe(oneStep[0]!.start);
  });
});

describe("PopART's SGD variants", () => {
  /** Bytes of gradient accumulators and optimizer state on each of the two IPUs. */
  const stateBytes = async (optimizer: (w: tf.Variable[]) => optim.SGD, accumulation = ACCUMULATION) => {
    const executable = await compileTraining({ ipus: 2, recomputation: 'None', optimizer, accumulation });
    return executable.hardware.memory.ipus.map((m) => ({ accumulators: m.byKind['gradient accumulators'], state: m.byKind['optimizer state'] }));
  };
  const weight = WIDTH * WIDTH * 4;

  it('SGD1 (combined, with momentum) accumulates into the velocity: one weight-sized tensor, no accumulator', async () => {
    // sgd.hpp: "for each micro batch v += (1 - dm) * vs * rf / (ls * af) * g" ... "SGD1 as there is 1 extra optimiser tensor".
    const combined = await stateBytes((w) => new optim.SGD(w, { lr: 0.01, momentum: 0.9, useCombinedAccum: true }));
    expect(combined).toEqual([
      { accumulators: 0, state: weight },
      { accumulators: 0, state: weight },
    ]);
  });

  it("SGD2 (separate, PopTorch's default) keeps an accumulator beside the velocity, float32 by default", async () => {
    // sgd.hpp: "a += g" then "v = v * mm + ..." ... "SGD2, as there are 2 extra optimiser tensors"; PopTorch's SGD defaults
    // use_combined_accum to False and accum_type and velocity_accum_type to float32 (python/optim.py).
    const separate = await stateBytes((w) => new optim.SGD(w, { lr: 0.01, momentum: 0.9 }));
    expect(separate).toEqual([
      { accumulators: weight, state: weight },
      { accumulators: weight, state: weight },
    ]);
    // Without accumulation (PopTorch sets enableGradientAccumulation only for an accumulation factor above 1) no accumulator.
    const oneStep = await compileTraining({ ipus: 1, recomputation: 'None', optimizer: (w) => new optim.SGD(w, { lr: 0.01, momentum: 0.9 }), accumulation: 1 });
    expect(oneStep.hardware.memory.ipus[0]!.byKind['gradient accumulators']).toBe(0);
  });

  it('SGD0 (no momentum) keeps only an accumulator, combined or not', async () => {
    // SGD::createOp: without momentum an SGD0ComboOp, with an accumulator when gradient accumulation is enabled.
    for (const useCombinedAccum of [false, true]) {
      expect(await stateBytes((w) => new optim.SGD(w, { lr: 0.01, useCombinedAccum }))).toEqual([
        { accumulators: weight, state: 0 },
        { accumulators: weight, state: 0 },
      ]);
    }
  });
});

describe("PopART's outlining", () => {
  it('keeps one copy of the code of kernels that are the same (kernel, attributes, shapes and types) on an IPU', async () => {
    // SessionOptions::enableOutlining defaults to true: repeated parts of the graph become one subgraph, called each time.
    const codeKernels = async (secondWidth: number) => {
      const w0 = tf.variable(tf.ones([WIDTH, WIDTH]), false, `outline_w0_${Math.random()}`);
      const w1 = tf.variable(tf.ones([WIDTH, secondWidth]), false, `outline_w1_${Math.random()}`);
      const executor = inferenceModel((x: tf.Tensor) => tf.relu(tf.matMul(tf.relu(tf.matMul(x, w0)), w1)), { options: new Options().ipuTarget(ONE_TILE) });
      await executor.compile(tf.ones([MICRO_BATCH, WIDTH]));
      const memory = executor.executable.hardware.memory.ipus[0]!;
      executor.destroy();
      w0.dispose();
      w1.dispose();
      // 20 bytes of code per kernel on the one tile, beside exchange buffers of 5% of the activations.
      return (memory.byKind['code and exchange'] - Math.round(0.05 * memory.byKind.activations)) / 20;
    };
    // Two [4,16]·[16,16] products and two relus of [4,16]: two kernels' code.
    expect(await codeKernels(WIDTH)).toBe(2);
    // A [4,16]·[16,32] product and a relu of [4,32] are kernels of their own: four.
    expect(await codeKernels(2 * WIDTH)).toBe(4);
  });
});
