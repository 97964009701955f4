import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Block, Options, SerialPhasedExecution, ShardedExecution, Phase, Stage, TensorLocationSettings, inferenceModel, trainingModel, type Liveness } from 'poptfjs';

function layers(n: number): tf.layers.Layer[] {
  return Array.from({ length: n }, (_, i) => {
    const layer = tf.layers.dense({ units: 3, inputShape: [3], kernelInitializer: tf.initializers.glorotUniform({ seed: 10 + i }) });
    layer.apply(tf.zeros([1, 3]));
    return layer;
  });
}

function twoBlockModel(ipus: [number, number] = [0, 1]) {
  const [a, b] = layers(2);
  return (x: tf.Tensor) => {
    const h = Block.run({ userId: 'first', ipuId: ipus[0] }, () => tf.tanh(a!.apply(x) as tf.Tensor));
    return Block.run({ userId: 'second', ipuId: ipus[1] }, () => b!.apply(h) as tf.Tensor);
  };
}

describe('schedules', () => {
  it('pipelines training over 2 IPUs with ramp-up, steady state and ramp-down (PopTorch Fig. 4.2)', async () => {
    const opts = new Options();
    opts.Training.gradientAccumulation(4);
    const executor = trainingModel(twoBlockModel(), { options: opts, loss: 'meanSquaredError' });
    await executor.compile(tf.ones([4, 3]), tf.ones([4, 3]));
    const { schedule } = executor.executable;
    expect(schedule.pipelineStages).toEqual([[0], [1, 2], [3]]);
    expect(schedule.steps).toHaveLength(4 + 3 - 1);
    expect(executor.planText().split('\n').slice(-7).join('\n')).toBe(
      [
        'step  IPU0       IPU1       ramp',
        '0     F0:0       .          up',
        '1     F0:1       F1:0 B1:0  up',
        '2     F0:2 B0:0  F1:1 B1:1  steady',
        '3     F0:3 B0:1  F1:2 B1:2  steady',
        '4     B0:2       F1:3 B1:3  down',
        '5     B0:3       .          down',
      ].join('\n'),
    );
  });

  it('pipelines inference over the device iterations', async () => {
    const executor = inferenceModel(twoBlockModel(), { options: new Options().deviceIterations(3) });
    await executor.compile(tf.ones([3, 3]));
    const { schedule } = executor.executable;
    expect(schedule.steps.map((s) => s.work.map((w) => `${w.unit}:${w.microBatch}`))).toEqual([['0:0'], ['0:1', '1:0'], ['0:2', '1:1'], ['1:2']]);
  });

  it('shards: one IPU busy at a time, forward then backward for each micro-batch', async () => {
    const opts = new Options().setExecutionStrategy(ShardedExecution());
    opts.Training.gradientAccumulation(2);
    const executor = trainingModel(twoBlockModel(), { options: opts, loss: 'meanSquaredError' });
    await executor.compile(tf.ones([2, 3]), tf.ones([2, 3]));
    const { schedule, placement } = executor.executable;
    expect(schedule.steps.every((s) => s.work.length === 1)).toBe(true);
    expect(schedule.steps.map((s) => `${placement.units[s.work[0]!.unit]!.pass[0]}${placement.units[s.work[0]!.unit]!.stages[0]}:${s.work[0]!.microBatch}`)).toEqual([
      'f0:0',
      'f1:0',
      'b1:0',
      'b0:0',
      'f0:1',
      'f1:1',
      'b1:1',
      'b0:1',
    ]);
  });

  it('runs phases in order, then the backward phases in reverse (sharing the last forward phase unless separate)', async () => {
    const fourBlocks = () => {
      const ls = layers(4);
      return (x: tf.Tensor) => {
        let h = x;
        ['A', 'A2', 'B', 'B2'].forEach((id, i) => {
          h = Block.run({ userId: id }, () => ls[i]!.apply(h) as tf.Tensor);
        });
        return h;
      };
    };
    const strategy = () => {
      const s = SerialPhasedExecution(Phase(Stage('A'), Stage('A2')), Phase(Stage('B'), Stage('B2')));
      s.phase(0).ipus(0, 1);
      s.phase(1).ipus(0, 1);
      return s;
    };
    const shared = trainingModel(fourBlocks(), { options: new Options().setExecutionStrategy(strategy()), loss: 'meanSquaredError' });
    await shared.compile(tf.ones([1, 3]), tf.ones([1, 3]));
    expect(shared.executable.schedule.steps.map((s) => s.phase)).toEqual([0, 1, 2]);
    const separate = trainingModel(fourBlocks(), {
      options: new Options().setExecutionStrategy(strategy().useSeparateBackwardPhase(true)),
      loss: 'meanSquaredError',
    });
    await separate.compile(tf.ones([1, 3]), tf.ones([1, 3]));
    expect(separate.executable.schedule.steps.map((s) => s.phase)).toEqual([0, 1, 2, 3]);
    expect(separate.executable.placement.stages.map((s) => [s.blocks[0], s.ipu, s.phase])).toEqual([
      ['A', 0, 0],
      ['A2', 1, 0],
      ['B', 0, 1],
      ['B2', 1, 1],
    ]);
  });

  it('plans streaming-memory transfers around phases as the liveness says', async () => {
    const ls = layers(4);
    const model = (x: tf.Tensor) => {
      let h = x;
      ['A', 'A2', 'B', 'B2'].forEach((id, i) => {
        h = Block.run({ userId: id }, () => tf.tanh(ls[i]!.apply(h) as tf.Tensor));
      });
      return h;
    };
    // Tensors kept on chip unless the liveness sends them off; `byDefault` leaves their locations to PopTorch's default.
    const plan = async (liveness: Liveness, byDefault = false) => {
      const s = SerialPhasedExecution(Phase(Stage('A'), Stage('A2')), Phase(Stage('B'), Stage('B2'))).setTensorsLiveness(liveness);
      s.phase(0).ipus(0, 1);
      s.phase(1).ipus(0, 1);
      const options = new Options().setExecutionStrategy(s);
      if (!byDefault) {
        const onChip = () => new TensorLocationSettings().useOnChipStorage(true);
        options.TensorLocations.setActivationLocation(onChip()).setWeightLocation(onChip()).setOptimizerLocation(onChip()).setAccumulatorLocation(onChip());
      }
      const executor = trainingModel(model, { options, loss: 'meanSquaredError' });
      await executor.compile(tf.ones([2, 3]), tf.ones([2, 3]));
      const transfers = executor.executable.streamingTransfers;
      executor.destroy();
      return transfers;
    };
    const bytes = (ts: Awaited<ReturnType<typeof plan>>, direction: string, kind: string) =>
      ts.filter((t) => t.direction === direction && t.kind === kind).reduce((sum, t) => sum + t.bytes, 0);
    expect(await plan('AlwaysLive')).toEqual([]);
    const afterForward = await plan('OffChipAfterFwd');
    expect(bytes(afterForward, 'store', 'activations')).toBeGreaterThan(0);
    expect(bytes(afterForward, 'load', 'activations')).toBe(bytes(afterForward, 'store', 'activations'));
    expect(bytes(afterForward, 'load', 'weights')).toBe(0);
    expect(afterForward.every((t) => t.overlapsCompute)).toBe(true);
    expect((await plan('OffChipAfterFwdNoOverlap')).every((t) => !t.overlapsCompute)).toBe(true);
    const eachPhase = await plan('OffChipAfterEachPhase');
    // Each of the four stages loads its 3x3 kernel and bias (48 bytes) before its forward and its backward step.
    expect(bytes(eachPhase, 'load', 'weights')).toBe(4 * 2 * 48);
    // Without locations, a phased model keeps its tensors off chip, as PopTorch's compiler sets them for phased execution
    // (graphcore/poptorch popart_compiler/source/Compiler.cpp, Compiler::initSession: location_activation, location_weight,
    // location_optimizer and location_accumulator useOnChipStorage(False) if not set): even always live, the weights are
    // loaded for the steps that read them: the two stages of the first phase before their forward and their backward
    // step, those of the last phase once, for the step that runs both of their passes.
    const byDefault = await plan('AlwaysLive', true);
    expect(bytes(byDefault, 'load', 'weights')).toBe(2 * 2 * 48 + 2 * 48);
  });
});
