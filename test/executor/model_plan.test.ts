/**
 * `plan()`: a model planned with shapes only gets the memory and timeline a
 * real compile gives it, without computing anything.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { BeginBlock, Options, PipelinedExecution, ShapeOnlyError, half, optim, plan, trainingModel } from 'poptfjs';

const WIDTHS = [64, 128, 96, 32, 16];

function mlp(): tf.Sequential {
  const model = tf.sequential({
    name: 'mlp',
    layers: WIDTHS.slice(1).map((units, i) =>
      tf.layers.dense({
        units,
        activation: i < 3 ? 'relu' : 'linear',
        inputShape: i === 0 ? [WIDTHS[0]!] : undefined,
        kernelInitializer: tf.initializers.glorotUniform({ seed: i + 1 }),
      }),
    ),
  });
  model.layers.forEach((layer, i) => BeginBlock(layer, { ipuId: i }));
  return model;
}

/** The same layers without blocks, on one IPU. */
function mlpOneIpu(): tf.Sequential {
  return tf.sequential({ layers: WIDTHS.slice(1).map((units, i) => tf.layers.dense({ units, inputShape: i === 0 ? [WIDTHS[0]!] : undefined })) });
}

function options(): Options {
  const o = new Options().setExecutionStrategy(PipelinedExecution());
  o.Training.gradientAccumulation(8);
  return o;
}

describe('plan()', () => {
  it('gives a model the memory and timeline a real compile gives it', async () => {
    const planned = await plan(mlp, {
      options: options(),
      loss: 'meanSquaredError',
      optimizer: (model) => new optim.Adam(model, { lr: 1e-3 }),
      inputs: [{ shape: [4, WIDTHS[0]!] }],
      target: { shape: [4, WIDTHS[4]!] },
    });
    const model = mlp();
    const executor = trainingModel(model, { options: options(), loss: 'meanSquaredError', optimizer: new optim.Adam(model, { lr: 1e-3 }) });
    await executor.compile(tf.zeros([32, WIDTHS[0]!]), tf.zeros([32, WIDTHS[4]!]));
    const { hardware } = executor.executable;
    expect(planned.memory.ipus.map((m) => m.byKind)).toEqual(hardware.memory.ipus.map((m) => m.byKind));
    expect(planned.timeline.cycles).toBe(hardware.timeline.cycles);
    expect(planned.throughput).toBeCloseTo(hardware.timeline.throughput, 6);
    expect(planned.samplesPerCall).toBe(32);
    expect(planned.parameters).toBe(model.countParams());
    expect(planned.fits).toBe(true);
    expect(planned.summary()).toBe(executor.getSummaryReport());
    executor.destroy();
  });

  it('plans inference, and says a model that does not fit does not fit instead of refusing it', async () => {
    const small = new Options().ipuTarget({ tiles: 4, memoryPerTile: 16 * 1024 });
    const planned = await plan(() => tf.sequential({ layers: [tf.layers.dense({ units: 256, inputShape: [256] })] }), { options: small, inputs: [{ shape: [8, 256] }] });
    expect(planned.executable.kind).toBe('inference');
    expect(planned.fits).toBe(false);
    expect(planned.memory.ipus[0]!.used).toBeGreaterThan(planned.memory.ipus[0]!.capacity);
  });

  it('builds on the shape-only backend and leaves nothing behind: the backend comes back, the model is disposed', async () => {
    const backend = tf.getBackend();
    const before = tf.memory().numTensors;
    let builtOn = '';
    await plan(
      () => {
        builtOn = tf.getBackend();
        return mlpOneIpu();
      },
      { inputs: [{ shape: [4, WIDTHS[0]!] }] },
    );
    expect(builtOn).toBe('poptfjs-shape-only');
    expect(tf.getBackend()).toBe(backend);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('plans float16 inputs and models', async () => {
    const halved = await plan(() => half(mlpOneIpu()), { inputs: [{ shape: [4, WIDTHS[0]!], dtype: 'float16' }] });
    const plain = await plan(mlpOneIpu, { inputs: [{ shape: [4, WIDTHS[0]!] }] });
    expect(halved.memory.ipus[0]!.byKind.weights).toBe(plain.memory.ipus[0]!.byKind.weights / 2);
    expect(halved.memory.ipus[0]!.peak.working).toBe(plain.memory.ipus[0]!.peak.working / 2);
  });

  it('names what a model may not do while planned: read values', async () => {
    const readsValues = () => (x: tf.Tensor) => {
      const y = tf.relu(x);
      return y.dataSync()[0]! > 0 ? y : tf.neg(y);
    };
    await expect(plan(readsValues, { inputs: [{ shape: [4, 8] }] })).rejects.toThrow(/reads the values of the output of kernel Relu/);
    const buildReads = () => {
      const w = tf.variable(tf.randomNormal([2000, 2]));
      w.dataSync();
      return (x: tf.Tensor) => tf.matMul(x, w);
    };
    await expect(plan(buildReads, { inputs: [{ shape: [4, 2000] }] })).rejects.toThrow(ShapeOnlyError);
  });

  it('refuses malformed requests with what is expected', async () => {
    await expect(plan(undefined as never, { inputs: [] })).rejects.toThrow(/plan: expected a function that builds the model/);
    await expect(plan(mlpOneIpu, { inputs: [{ shape: [0, 4] }] })).rejects.toThrow(/plan: inputs\[0\] must be \{ shape: \[positive integers\], dtype\? \}/);
    await expect(plan(mlpOneIpu, { inputs: [{ shape: [4, WIDTHS[0]!] }], optimizer: 'adagrad' as never })).rejects.toThrow(
      /unknown optimizer 'adagrad'; expected one of sgd, adam, adamw, rmsprop, lamb/,
    );
    await expect(plan(() => 42 as never, { inputs: [{ shape: [4, 4] }] })).rejects.toThrow(/build\(\) must return a tf.LayersModel or a function of tensors, got number/);
  });

  it('plans a model larger than the host could compute: 20 layers of 8192 × 8192, 5 GiB of float32 weights', async () => {
    // More than the wasm backend's 4 GiB heap could hold; planned, the weights are shapes (each initial value is dropped once written).
    const layers = 20;
    const planned = await plan(
      () => tf.sequential({ layers: Array.from({ length: layers }, () => tf.layers.dense({ units: 8192, inputShape: [8192], useBias: false, kernelInitializer: 'zeros' })) }),
      { inputs: [{ shape: [1, 8192] }] },
    );
    expect(planned.parameters).toBe(layers * 8192 * 8192);
    expect(planned.memory.ipus[0]!.byKind.weights).toBe(layers * 8192 * 8192 * 4);
    expect(planned.fits).toBe(false);
  });
});
