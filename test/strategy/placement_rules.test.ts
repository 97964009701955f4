import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import {
  AutoStage,
  BeginBlock,
  Block,
  Options,
  ParallelPhasedExecution,
  Phase,
  PipelinedExecution,
  SerialPhasedExecution,
  ShardedExecution,
  Stage,
  inferenceModel,
  ops,
  removeBlocks,
  trainingModel,
} from 'poptfjs';

/** Dense layers built ahead of the trace. */
function denseLayers(n: number, width = 4): tf.layers.Layer[] {
  return Array.from({ length: n }, (_, i) => {
    const layer = tf.layers.dense({ units: width, inputShape: [width], kernelInitializer: tf.initializers.glorotUniform({ seed: i }) });
    layer.apply(tf.zeros([1, width]));
    return layer;
  });
}

/** A function model that runs each layer in a block on the given IPU. */
function blockModel(ipus: number[], layers = denseLayers(ipus.length)) {
  return (x: tf.Tensor) => {
    Block.useAutoId();
    let h = x;
    ipus.forEach((ipuId, i) => {
      h = Block.run({ ipuId }, () => tf.relu(layers[i]!.apply(h) as tf.Tensor));
    });
    return h;
  };
}

function opts(strategy?: Parameters<Options['setExecutionStrategy']>[0]): Options {
  const o = new Options().deviceIterations(4);
  if (strategy) o.setExecutionStrategy(strategy);
  return o;
}

describe('block rules', () => {
  it('places blocks on their IPUs, one pipeline stage per IPU', async () => {
    const executor = inferenceModel(blockModel([0, 1, 2, 3]), { options: opts() });
    await executor.run(tf.ones([4, 4]));
    const { placement } = executor.executable;
    expect(placement.stages.map((s) => [s.ipu, s.blocks])).toEqual([
      [0, ['0']],
      [1, ['1']],
      [2, ['2']],
      [3, ['3']],
    ]);
    expect(placement.ipusPerReplica).toBe(4);
  });

  it('places every node of a training step with its block, those the backward pass and the patterns make included', async () => {
    // Dense layers without bias: the patterns merge and remove the forward reshapes the backward nodes pointed at,
    // and lower the transposed products of the backward pass to a transpose of the weight and a plain product.
    const model = tf.sequential({ layers: [64, 32, 16, 8].map((units, i) => tf.layers.dense({ units, useBias: false, inputShape: i === 0 ? [8] : undefined })) });
    model.layers.forEach((layer, i) => BeginBlock(layer, { ipuId: i }));
    const o = new Options().setExecutionStrategy(PipelinedExecution()).patterns('All');
    o.Training.gradientAccumulation(8);
    const executor = trainingModel(model, { options: o, loss: 'meanSquaredError' });
    await executor.compile(tf.ones([8, 8]), tf.ones([8, 8]));
    const { graph, placement } = executor.executable;
    const ipuOf = (node: number) => placement.stages[placement.nodeStages[node]!]!.ipu;
    const paramIpu = new Map(
      model.layers.map((layer, i) => [layer.getWeights().length > 0 ? (layer.weights[0]! as unknown as { originalName: string }).originalName : '', i]),
    );
    for (const node of graph.nodes) {
      if (node.annotations.block !== undefined) expect(ipuOf(node.id)).toBe(Number(node.annotations.block));
      // A node that reads a weight runs on the weight's IPU.
      for (const id of node.inputs) {
        const source = graph.values[id]!.source;
        if (source.kind === 'param') expect(ipuOf(node.id)).toBe(paramIpu.get(source.name));
      }
    }
    expect(Object.keys(executor.patterns())).toContain('TransposedMatMul');
  });

  it('rejects ops outside any Block when Blocks are used', async () => {
    const layers = denseLayers(2);
    const model = (x: tf.Tensor) => {
      const h = Block.run({ ipuId: 0 }, () => layers[0]!.apply(x) as tf.Tensor);
      return tf.sigmoid(layers[1]!.apply(h) as tf.Tensor);
    };
    await expect(inferenceModel(model).run(tf.ones([1, 4]))).rejects.toThrow(
      /kernel \w+ in layer 'dense_Dense\d+' runs outside any Block, but the model uses Blocks: every layer must be inside a Block/,
    );
  });

  it('rejects a layer annotated twice with BeginBlock', () => {
    const model = tf.sequential({ layers: denseLayers(2) });
    BeginBlock(model.layers[1]!, { ipuId: 1 });
    expect(() => BeginBlock(model.layers[1]!, { ipuId: 1 })).toThrow(/layer 'dense_Dense\d+' is already annotated with BeginBlock/);
  });

  it('rejects BeginBlock annotations that a function runs in an order contradicting them', async () => {
    const layers = denseLayers(3);
    BeginBlock(layers[2]!, { ipuId: 1 });
    BeginBlock(layers[1]!, { ipuId: 1 });
    const model = (x: tf.Tensor) => layers.reduce((h, layer) => layer.apply(h) as tf.Tensor, x);
    await expect(inferenceModel(model).run(tf.ones([1, 4]))).rejects.toThrow(
      /BeginBlock order contradicts the model's order: layer 'dense_Dense\d+' was annotated before layer 'dense_Dense\d+' but runs after it/,
    );
  });

  it('places a layers model by its layer list, whatever order the BeginBlock annotations were made in', async () => {
    const model = tf.sequential({ layers: denseLayers(3) });
    BeginBlock(model.layers[2]!, { ipuId: 1 });
    BeginBlock(model.layers[1]!, { ipuId: 1 });
    const executor = inferenceModel(model, { options: opts() });
    await executor.run(tf.ones([4, 4]));
    // Blocks without a userId are numbered in the list's order.
    expect(executor.executable.placement.stages.map((s) => [s.ipu, s.blocks])).toEqual([
      [0, ['(unannotated)']],
      [1, ['0', '1']],
    ]);
    removeBlocks(model);
    await expect(inferenceModel(model).run(tf.ones([1, 4]))).resolves.toBeDefined();
  });

  it('rejects annotated layers the model never runs', async () => {
    class Skipping extends tf.layers.Layer {
      readonly layers: tf.layers.Layer[];
      constructor(unused: tf.layers.Layer) {
        super({ name: 'skipping' });
        this.layers = [unused];
      }
      override call(inputs: tf.Tensor | tf.Tensor[]): tf.Tensor {
        return tf.mul(Array.isArray(inputs) ? inputs[0]! : inputs, 2);
      }
      static get className(): string {
        return 'Skipping';
      }
    }
    const [unused] = denseLayers(1);
    const model = tf.sequential({ layers: [tf.layers.inputLayer({ inputShape: [4] }), new Skipping(unused!)] });
    BeginBlock(unused!, { ipuId: 0 });
    await expect(inferenceModel(model).run(tf.ones([1, 4]))).rejects.toThrow(/layer 'dense_Dense\d+' is annotated with BeginBlock but the model never runs it/);
  });

  it('rejects stage ids that do not ascend under AutoStage.SameAsIpu, and compiles with AutoIncrement', async () => {
    await expect(inferenceModel(blockModel([0, 1, 0]), { options: opts() }).run(tf.ones([4, 4]))).rejects.toThrow(
      "PipelinedExecution: block '2' on IPU 0 gets stage 0, but it runs after block '1' on IPU 1 with stage 1; stage ids must ascend in the order the model runs (use AutoStage.AutoIncrement, or explicit Stages)",
    );
    const executor = inferenceModel(blockModel([0, 1, 0]), { options: opts(PipelinedExecution(AutoStage.AutoIncrement)) });
    await executor.run(tf.ones([4, 4]));
    expect(executor.executable.placement.stages.map((s) => s.ipu)).toEqual([0, 1, 0]);
  });

  it('rejects stages that name blocks the model does not have', async () => {
    const layers = denseLayers(2);
    const model = (x: tf.Tensor) => {
      const h = Block.run({ userId: 'A' }, () => layers[0]!.apply(x) as tf.Tensor);
      return Block.run({ userId: 'B' }, () => layers[1]!.apply(h) as tf.Tensor);
    };
    await expect(inferenceModel(model, { options: opts(PipelinedExecution(Stage('A').ipu(0), Stage('C').ipu(1))) }).run(tf.ones([4, 4]))).rejects.toThrow(
      "PipelinedExecution: stage 1 refers to block 'C', but the model has no such block (its blocks: 'A', 'B')",
    );
    await expect(inferenceModel(model, { options: opts(PipelinedExecution(Stage('A').ipu(0))) }).run(tf.ones([4, 4]))).rejects.toThrow(
      "PipelinedExecution: block 'B' is in none of the stages (Stage(A)); add it to a stage",
    );
  });

  it('asks for a power of two IPUs unless autoRoundNumIPUs is set', async () => {
    await expect(inferenceModel(blockModel([0, 1, 2]), { options: opts() }).run(tf.ones([4, 4]))).rejects.toThrow(
      'the model uses 3 IPU(s) (3 per replica × 1 replica(s)), and IPUs are reserved in powers of two: place the model on 4 IPU(s) per replica, or set opts.autoRoundNumIPUs(true) to reserve 4',
    );
    const executor = inferenceModel(blockModel([0, 1, 2]), { options: opts().autoRoundNumIPUs(true) });
    await executor.run(tf.ones([4, 4]));
    expect(executor.executable.placement.ipusReserved).toBe(4);
  });

  it('needs deviceIterations >= pipeline stages for inference', async () => {
    const executor = inferenceModel(blockModel([0, 1]), { options: new Options().deviceIterations(1) });
    await expect(executor.run(tf.ones([1, 4]))).rejects.toThrow(
      'the pipeline has 2 stages, so deviceIterations must be at least 2, but it is 1: set opts.deviceIterations(2) or more',
    );
  });

  it('needs gradientAccumulation >= pipeline stages (forward and backward) for training', async () => {
    const o = new Options();
    o.Training.gradientAccumulation(2);
    const executor = trainingModel(blockModel([0, 1]), { options: o, loss: 'meanSquaredError' });
    await expect(executor.run(tf.ones([2, 4]), tf.ones([2, 4]))).rejects.toThrow(
      'the pipeline has 3 stages (2 forward, 1 backward), so gradientAccumulation must be at least 3, but it is 2: set opts.Training.gradientAccumulation(3) or more',
    );
  });

  it('merges consecutive blocks on the same IPU into one stage', async () => {
    const executor = inferenceModel(blockModel([0, 0, 1, 1]), { options: opts() });
    await executor.run(tf.ones([4, 4]));
    expect(executor.executable.placement.stages.map((s) => s.blocks)).toEqual([
      ['0', '1'],
      ['2', '3'],
    ]);
  });

  it('groups blocks given to one Stage', async () => {
    const executor = inferenceModel(blockModel([0, 1, 2, 3]), { options: opts(PipelinedExecution(Stage('0', '1').ipu(0), Stage('2', '3').ipu(1))) });
    await executor.run(tf.ones([4, 4]));
    expect(executor.executable.placement.stages.map((s) => [s.ipu, s.blocks])).toEqual([
      [0, ['0', '1']],
      [1, ['2', '3']],
    ]);
  });

  it('requires even phases on even IPUs and odd phases on odd IPUs in ParallelPhasedExecution', async () => {
    const strategy = ParallelPhasedExecution(Phase(Stage('0'), Stage('1')), Phase(Stage('2'), Stage('3')));
    strategy.phase(0).ipus(0, 2);
    strategy.phase(1).ipus(2, 3);
    await expect(inferenceModel(blockModel([0, 1, 2, 3]), { options: opts(strategy) }).run(tf.ones([4, 4]))).rejects.toThrow(
      'ParallelPhasedExecution: phase 1 runs on IPU 2, but odd phases must run on odd IPUs',
    );
  });

  it('requires serial phases to share one group of IPUs with one stage per IPU', async () => {
    const mismatched = SerialPhasedExecution(Phase(Stage('0').ipu(0), Stage('1').ipu(1)), Phase(Stage('2').ipu(0), Stage('3').ipu(2)));
    await expect(inferenceModel(blockModel([0, 1, 2, 3]), { options: opts(mismatched) }).run(tf.ones([4, 4]))).rejects.toThrow(
      'SerialPhasedExecution: phase 1 runs on IPUs 0,2 but phase 0 on IPUs 0,1; serial phases all run on the same group of IPUs',
    );
    const uneven = SerialPhasedExecution(Phase(Stage('0').ipu(0), Stage('1').ipu(1)), Phase(Stage('2', '3').ipu(0)));
    await expect(inferenceModel(blockModel([0, 1, 2, 3]), { options: opts(uneven) }).run(tf.ones([4, 4]))).rejects.toThrow(
      'SerialPhasedExecution: phase 1 has 1 stage(s) but phase 0 has 2; every phase needs one stage per IPU of its group',
    );
  });

  it("runs a serial phase whose Stage has no IPU on its block's, as PopTorch does (test_if_on_multiple_ipus)", async () => {
    // PopTorch's tests/if_test.py: two conds in Block('0', ipu 0) and Block('1', ipu 1), SerialPhasedExecution(Stage('0'), Stage('1')).
    const thenBody = (x: tf.Tensor, y: tf.Tensor) => [tf.add(x, y), y];
    const elseBody = (x: tf.Tensor, y: tf.Tensor) => [x, tf.mul(x, y)];
    const model = (condition: tf.Tensor, x: tf.Tensor, y: tf.Tensor) => {
      const [x1, y1] = Block.run({ userId: '0', ipuId: 0 }, () => ops.cond(condition, thenBody, [x, y], elseBody, [x, y]));
      return Block.run({ userId: '1', ipuId: 1 }, () => ops.cond(tf.logicalNot(condition), thenBody, [x1!, y1!], elseBody, [x1!, y1!]));
    };
    const executor = inferenceModel(model, { options: new Options().setExecutionStrategy(SerialPhasedExecution(Stage('0'), Stage('1'))) });
    const x = tf.tensor1d([1, 2]);
    const y = tf.tensor1d([3, 4]);
    const [xt, yt] = (await executor.run(tf.tensor1d([true], 'bool'), x, y)) as tf.Tensor[];
    // then (x + y, y), then else (x + y, (x + y) · y).
    expect([Array.from(xt!.dataSync()), Array.from(yt!.dataSync())]).toEqual([
      [4, 6],
      [12, 24],
    ]);
    const [xf, yf] = (await executor.run(tf.tensor1d([false], 'bool'), x, y)) as tf.Tensor[];
    // else (x, x · y), then then (x + x · y, x · y).
    expect([Array.from(xf!.dataSync()), Array.from(yf!.dataSync())]).toEqual([
      [4, 10],
      [3, 8],
    ]);
    const { placement } = executor.executable;
    expect(placement.stages.map((s) => [s.phase, s.ipu, s.blocks])).toEqual([
      [0, 0, ['0']],
      [1, 1, ['1']],
    ]);
    executor.destroy();
  });

  it('ShardedExecution accepts the same annotations as pipelining', async () => {
    const executor = inferenceModel(blockModel([0, 1]), { options: new Options().setExecutionStrategy(ShardedExecution()) });
    await executor.run(tf.ones([1, 4]));
    expect(executor.executable.placement.strategy).toBe('ShardedExecution');
  });
});
