import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import {
  Block,
  GC200,
  Liveness,
  Options,
  OutOfMemoryError,
  half,
  Phase,
  PipelinedExecution,
  SerialPhasedExecution,
  Stage,
  TensorLocationSettings,
  inferenceModel,
  trainingModel,
} from 'poptfjs';

/** A model of four equal dense layers of 128 × 128 (64 KiB of weights each), each in its own block. */
function fourLayerModel() {
  const layers = [0, 1, 2, 3].map((i) => {
    const l = tf.layers.dense({ units: 128, inputShape: [128], kernelInitializer: tf.initializers.glorotUniform({ seed: i }) });
    l.apply(tf.zeros([1, 128]));
    return l;
  });
  return (x: tf.Tensor) => {
    ['b0', 'b1', 'b2', 'b3'].forEach((userId, i) => {
      x = Block.run({ userId }, () => tf.relu(layers[i]!.apply(x) as tf.Tensor));
    });
    return x;
  };
}

/** An IPU of 32 tiles × 16 KiB = 512 KiB: too small for the four layers' weights and gradient accumulators. */
const SMALL_IPU = { tiles: 32, memoryPerTile: 16 * 1024 };

function options(strategy?: Parameters<Options['setExecutionStrategy']>[0]): Options {
  const o = new Options().ipuTarget(SMALL_IPU);
  o.Training.gradientAccumulation(8);
  if (strategy) o.setExecutionStrategy(strategy);
  return o;
}

async function compileTraining(o: Options) {
  const executor = trainingModel(fourLayerModel(), { options: o, loss: 'meanSquaredError' });
  await executor.compile(tf.ones([8, 128]), tf.ones([8, 128]));
  return executor;
}

describe('memory: will it fit', () => {
  it('refuses a model too large for one IPU, naming the IPU, how much over, the largest items and what would help', async () => {
    const error = await compileTraining(options(PipelinedExecution(Stage('b0', 'b1', 'b2', 'b3').ipu(0)))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutOfMemoryError);
    const oom = error as OutOfMemoryError;
    expect(oom.ipu).toBe(0);
    expect(oom.bytesOver).toBeGreaterThan(0);
    expect(oom.message).toMatch(
      /^IPU 0 is out of memory compiling model '[^']+' at micro-batch \d+: it needs [\d.]+ KiB of its 512\.0 KiB \([\d.]+ KiB over\)\. Largest items: .*weights 'dense_Dense\d+\/kernel' 64\.0 KiB/,
    );
    expect(oom.message).toContain('split the model over more IPUs with Block/BeginBlock annotations and pipelining (it uses 1 now)');
    expect(oom.message).toContain('Options.allowOutOfMemory(true)');
  });

  it('fits when pipelined over 4 IPUs', async () => {
    const executor = await compileTraining(options(PipelinedExecution(...['b0', 'b1', 'b2', 'b3'].map((b, i) => Stage(b).ipu(i)))));
    const { memory } = executor.executable.hardware;
    expect(memory.fits).toBe(true);
    expect(memory.ipus).toHaveLength(4);
    // Each IPU holds its layer's kernel and bias (the constants of MSE's gradient are fills of one value: broadcasts, no memory).
    expect(memory.ipus.map((m) => m.byKind.weights)).toEqual([0, 0, 0, 0].map(() => 128 * 128 * 4 + 128 * 4));
  });

  it('fits with serial phased execution on 2 IPUs when weights live off chip between phases', async () => {
    const strategy = SerialPhasedExecution(Phase(Stage('b0').ipu(0), Stage('b1').ipu(1)), Phase(Stage('b2').ipu(0), Stage('b3').ipu(1)));
    strategy.setTensorsLiveness(Liveness.OffChipAfterEachPhase);
    const executor = await compileTraining(options(strategy));
    expect(executor.executable.hardware.memory.fits).toBe(true);
    const alwaysLive = () => SerialPhasedExecution(Phase(Stage('b0').ipu(0), Stage('b1').ipu(1)), Phase(Stage('b2').ipu(0), Stage('b3').ipu(1)));
    const onChipOptions = options(alwaysLive()).allowOutOfMemory(true);
    onChipOptions.TensorLocations.setWeightLocation(new TensorLocationSettings().useOnChipStorage(true));
    const onChip = await compileTraining(onChipOptions);
    // Always live with no weight location set, the weights are off chip all the same: PopTorch's default for phased
    // execution (graphcore/poptorch popart_compiler/source/Compiler.cpp, Compiler::initSession, location_weight).
    const byDefault = await compileTraining(options(alwaysLive()).allowOutOfMemory(true));
    // IPU 0 runs b0 and b2: streamed, only one phase's layer is on chip.
    const layer = 128 * 128 * 4 + 128 * 4;
    expect(executor.executable.hardware.memory.ipus[0]!.byKind.weights).toBe(layer);
    expect(byDefault.executable.hardware.memory.ipus[0]!.byKind.weights).toBe(layer);
    expect(onChip.executable.hardware.memory.ipus[0]!.byKind.weights).toBe(2 * layer);
    expect(executor.executable.hardware.memory.ipus[0]!.streaming.byKind.weights).toBe(2 * layer);
  });

  it('compiles anyway with allowOutOfMemory, for the report, but refuses to run', async () => {
    const executor = await compileTraining(options(PipelinedExecution(Stage('b0', 'b1', 'b2', 'b3').ipu(0))).allowOutOfMemory(true));
    expect(executor.executable.hardware.memory.fits).toBe(false);
    expect(executor.getSummaryReport()).toMatch(/OUT OF MEMORY by/);
    await expect(executor.run(tf.ones([8, 128]), tf.ones([8, 128]))).rejects.toThrow(OutOfMemoryError);
  });

  it('counts the activations of micro-batches in flight in a pipeline', async () => {
    const peak = async (iterations: number) => {
      const executor = inferenceModel(fourLayerModel(), {
        options: new Options().deviceIterations(iterations).setExecutionStrategy(PipelinedExecution(...['b0', 'b1', 'b2', 'b3'].map((b, i) => Stage(b).ipu(i)))),
      });
      await executor.compile(tf.ones([iterations * 4, 128]));
      return executor.executable.hardware.memory.ipus.map((m) => m.byKind.activations);
    };
    const [four, eight] = [await peak(4), await peak(8)];
    // Each micro-batch of 4 samples holds 4 × 128 floats between stages: the peak does not grow with more micro-batches.
    expect(eight).toEqual(four);
    expect(four[1]).toBeGreaterThan(0);
  });

  it('keeps the temporary memory of a product within the available memory proportion of each tile, at a cost in time', async () => {
    const compile = async (proportion?: number) => {
      const o = new Options();
      if (proportion !== undefined) o.setAvailableMemoryProportion({ IPU0: proportion });
      const executor = inferenceModel((x: tf.Tensor) => tf.matMul(x, tf.ones([1024, 2048])), { options: o });
      await executor.compile(tf.ones([512, 1024]));
      return executor.executable.hardware;
    };
    const roomy = await compile();
    const tight = await compile(0.1);
    const tile = GC200.memoryPerTile;
    expect(roomy.memory.ipus[0]!.byKind.temporary).toBeLessThanOrEqual(0.6 * tile * GC200.tiles);
    expect(tight.memory.ipus[0]!.byKind.temporary).toBeLessThanOrEqual(0.1 * tile * GC200.tiles);
    // Within a tenth of each tile, the product runs its columns in serial steps: less memory, more cycles.
    expect(tight.memory.ipus[0]!.byKind.temporary).toBeLessThan(0.7 * roomy.memory.ipus[0]!.byKind.temporary);
    expect(tight.timeline.duration).toBeGreaterThan(roomy.timeline.duration);
  });

  it('counts captured constants as weights, as a tfjs GraphModel holds its weights', async () => {
    const kernel = tf.randomNormal([256, 128], 0, 1, 'float32', 7);
    const bias = tf.randomNormal([128], 0, 1, 'float32', 8);
    const executor = inferenceModel((x: tf.Tensor) => tf.relu(tf.add(tf.matMul(x, kernel), bias)));
    await executor.compile(tf.ones([4, 256]));
    const { weights } = executor.executable.hardware.memory.ipus[0]!.byKind;
    expect(weights).toBe((256 * 128 + 128) * 4);
    expect(executor.executable.hardware.memory.ipus[0]!.items.filter((i) => i.kind === 'weights').map((i) => i.name)).toEqual([
      'constant %2 float32[1,256,128]',
      'constant %3 float32[128]',
    ]);
  });

  it('counts float16 weights at two bytes an element', async () => {
    const weights = async (toHalf: boolean) => {
      const model = tf.sequential({ layers: [tf.layers.dense({ units: 64, inputShape: [64], useBias: false })] });
      if (toHalf) half(model);
      const executor = inferenceModel(model);
      await executor.compile(tf.ones([1, 64]));
      return executor.executable.hardware.memory.ipus[0]!.byKind.weights;
    };
    expect(await weights(false)).toBe(64 * 64 * 4);
    expect(await weights(true)).toBe(64 * 64 * 2);
  });
});
