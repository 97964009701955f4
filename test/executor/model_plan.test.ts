/**
 * `plan()`: a model planned with shapes only gets the memory and timeline a
 * real compile gives it, without computing anything.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { BeginBlock, Options, PipelinedExecution, ShapeOnlyError, half, optim, plan, trainingModel } from 'poptfjs';
import { PLAN_STEPS } from '../../lib/compile/compile_progress.js';
import { gptInputs, gptLanguageModel } from '../../examples/models/gpt.js';
import { describeArrays, hostArraysMadeBy } from '../backend/shape_only/host_arrays.js';

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
    // The plan's summary leads with its verdict (the fullest IPU by hand), then the compiled model's memory and placement,
    // then the simulated execution a plan always has: it never says profiling is off.
    const fullest = hardware.memory.ipus.reduce((a, b) => (b.used / b.capacity > a.used / a.capacity ? b : a));
    const [verdict, ...sections] = planned.summary().split('\n\n');
    expect(verdict).toMatch(
      new RegExp(`^Plan of '.+' for training on 4 IPU\\(s\\): fits: ${hardware.timeline.throughput.toFixed(1)} samples/s \\(simulated\\); fullest IPU ${fullest.ipu}, `),
    );
    const compiled = executor.getSummaryReport().split('\n\n');
    expect(sections.slice(0, 2)).toEqual(compiled.slice(1, 3));
    expect(sections[2]).toMatch(/^Simulated execution of one call:/);
    expect(planned.summary()).not.toContain('Execution profiling not enabled');
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
    await expect(plan(undefined as never, { inputs: [] })).rejects.toThrow(/plan: expected a function that builds a tfjs model/);
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

  it('plans layer norms, dropout and fills of more than a thousand elements as the compile does (the same Fill nodes, the same memory and time)', async () => {
    const model = () => {
      const m = tf.sequential({
        layers: [
          tf.layers.dense({ units: 256, inputShape: [64], kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
          tf.layers.layerNormalization(),
          tf.layers.dropout({ rate: 0.2 }),
          tf.layers.dense({ units: 256, activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
          tf.layers.layerNormalization(),
          tf.layers.dense({ units: 8, kernelInitializer: tf.initializers.glorotUniform({ seed: 3 }) }),
        ],
      });
      m.layers.forEach((layer, i) => BeginBlock(layer, { ipuId: i < 3 ? 0 : 1 }));
      return m;
    };
    const planned = await plan(model, { options: options(), loss: 'meanSquaredError', optimizer: 'sgd', inputs: [{ shape: [16, 64] }], target: { shape: [16, 8] } });
    const compiled = model();
    const executor = trainingModel(compiled, { options: options(), loss: 'meanSquaredError', optimizer: new optim.SGD(compiled, { lr: 0.01 }) });
    await executor.compile(tf.zeros([128, 64]), tf.zeros([128, 8]));
    const fills = (graph: { nodes: readonly { kernel: string; attrs: Record<string, unknown> }[] }) =>
      graph.nodes.filter((n) => n.kernel === 'Fill').map((n) => JSON.stringify(n.attrs));
    // The layer norms' mean gradients fill [16, 256]: 4096 elements.
    expect(fills(planned.executable.graph)).toContain(JSON.stringify({ shape: [16, 256], value: 1, dtype: 'float32' }));
    expect(fills(planned.executable.graph)).toEqual(fills(executor.executable.graph));
    expect(planned.executable.graph.nodes.map((n) => n.kernel)).toEqual(executor.executable.graph.nodes.map((n) => n.kernel));
    expect(planned.memory.ipus.map((m) => m.byKind)).toEqual(executor.executable.hardware.memory.ipus.map((m) => m.byKind));
    expect(planned.timeline.cycles).toBe(executor.executable.hardware.timeline.cycles);
    executor.destroy();
  });

  it('simulates a pipeline over many micro-batches from its steady state: the time of the compile that lists them all', async () => {
    const many = () => {
      const o = options();
      o.Training.gradientAccumulation(20000);
      return o;
    };
    const planned = await plan(mlp, { options: many(), loss: 'meanSquaredError', optimizer: 'sgd', inputs: [{ shape: [1, WIDTHS[0]!] }], target: { shape: [1, WIDTHS[4]!] } });
    const model = mlp();
    const executor = trainingModel(model, { options: many(), loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.01 }) });
    await executor.compile(tf.zeros([20000, WIDTHS[0]!]), tf.zeros([20000, WIDTHS[4]!]));
    const { schedule, hardware } = executor.executable;
    // 4 stages: 7 pipeline stages, 15 micro-batches listed of 20000.
    expect(planned.executable.schedule.listedMicroBatches).toBe(15);
    expect(planned.executable.schedule.microBatches).toBe(20000);
    expect(planned.executable.schedule.steps).toHaveLength(15 + 7 - 1);
    expect(schedule.steps).toHaveLength(20000 + 7 - 1);
    expect(planned.timeline.repeated).toEqual([expect.objectContaining({ times: 20000 - 15, what: 'the steady-state step, for micro-batches 15 to 19999' })]);
    expect(planned.timeline.duration / hardware.timeline.duration).toBeCloseTo(1, 9);
    expect(planned.throughput / hardware.timeline.throughput).toBeCloseTo(1, 9);
    expect(planned.timeline.bubbleFraction).toBeCloseTo(hardware.timeline.bubbleFraction, 9);
    planned.timeline.ipus.forEach((activity, ipu) => {
      const compiled = hardware.timeline.ipus[ipu]!;
      for (const kind of ['compute', 'exchange', 'sync', 'host', 'idle'] as const) expect(activity[kind]).toBeCloseTo(compiled[kind], 9);
    });
    expect(planned.memory.ipus.map((m) => m.byKind)).toEqual(hardware.memory.ipus.map((m) => m.byKind));
    expect(planned.timeline.segments.length).toBeLessThan(hardware.timeline.segments.length / 100);
    executor.destroy();
  });

  it('does not grow with gradientAccumulation(1e9) and deviceIterations(1e9): the same memory, a billion times the time of one', async () => {
    const request = (accumulation: number, iterations: number) => {
      const o = options().deviceIterations(iterations);
      o.Training.gradientAccumulation(accumulation);
      return { options: o, loss: 'meanSquaredError' as const, optimizer: 'sgd' as const, inputs: [{ shape: [1, WIDTHS[0]!] }], target: { shape: [1, WIDTHS[4]!] } };
    };
    const rssBefore = process.memoryUsage().rss;
    const huge = await plan(mlp, request(1e9, 1e9));
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 2 ** 20);
    const once = await plan(mlp, request(1e9, 1));
    const listed = await plan(mlp, request(100, 1));
    expect(huge.samplesPerCall).toBe(1e18);
    expect(huge.memory.ipus.map((m) => m.byKind)).toEqual(listed.memory.ipus.map((m) => m.byKind));
    expect(huge.executable.schedule.steps).toHaveLength(15 + 7 - 1);
    expect(huge.timeline.segments.length).toBe(once.timeline.segments.length);
    expect(huge.timeline.repeated?.map((r) => r.times)).toEqual([1e9 - 15, 1e9 - 1]);
    // Each device iteration repeats the first (its schedule and weight update), and the host transfers grow with the samples of the call.
    expect(huge.timeline.duration / (1e9 * once.timeline.duration)).toBeCloseTo(1, 6);
  });

  it('answers huge layers with a plan, not a RangeError: a trillion weights of tfjs layers or tfjs ops, without making their values', async () => {
    const { result, arrays } = await hostArraysMadeBy(1e6, async () => {
      const layers = await plan(() => tf.sequential({ layers: [tf.layers.dense({ units: 1e6, inputShape: [1e6] })] }), { inputs: [{ shape: [1, 1e6] }] });
      const embedding = await plan(() => tf.sequential({ layers: [tf.layers.embedding({ inputDim: 1e9, outputDim: 4096, inputLength: 8 })] }), {
        inputs: [{ shape: [2, 8], dtype: 'int32' }],
      });
      const ops = await plan(
        () => {
          const w = tf.variable(tf.randomNormal([1e6, 1e6], 0, 0.02));
          const v = tf.variable(tf.truncatedNormal([1e6, 1e3]));
          const b = tf.variable(tf.randomUniform([1e3], -1, 1));
          return (x: tf.Tensor) => tf.add(tf.matMul(tf.dropout(tf.matMul(x, w), 0.1), v), b);
        },
        { loss: 'meanSquaredError', inputs: [{ shape: [4, 1e6] }], target: { shape: [4, 1e3] } },
      );
      return { layers, embedding, ops };
    });
    expect(arrays, describeArrays(arrays)).toEqual([]);
    expect(result.layers.parameters).toBe(1e12 + 1e6);
    expect(result.layers.fits).toBe(false);
    expect(result.embedding.parameters).toBe(4096e9);
    expect(result.ops.parameters).toBe(1e12 + 1e9 + 1e3);
    expect(result.ops.memory.ipus[0]!.byKind.weights).toBeGreaterThanOrEqual(4 * (1e12 + 1e9 + 1e3));
  });

  it('names tf.fill when a model makes a huge tensor on the host while planning', async () => {
    await expect(plan(() => (x: tf.Tensor) => tf.add(x, tf.zeros([1e6, 1e6])), { inputs: [{ shape: [1e6, 1e6] }] })).rejects.toThrow(
      /plan: the model made a tensor too large for the host's memory \(Invalid typed array length: 1000000000000\).*make large constant tensors with tf.fill/,
    );
    const zeros = () => {
      const table = tf.variable(tf.zeros([1e6, 1e5]));
      return (x: tf.Tensor) => tf.matMul(x, table);
    };
    await expect(plan(zeros, { inputs: [{ shape: [2, 1e6] }] })).rejects.toThrow(
      /plan: build\(\) made a tensor too large for the host's memory \(Invalid typed array length: 100000000000\).*tf.zeros, tf.ones, tf.tensor and tf.buffer make their values on the host; make large constant tensors with tf.fill\(shape, value\)/,
    );
    const filled = await plan(
      () => {
        const table = tf.variable(tf.fill([1e6, 1e5], 0));
        return (x: tf.Tensor) => tf.matMul(x, table);
      },
      { inputs: [{ shape: [2, 1e6] }] },
    );
    expect(filled.parameters).toBe(1e11);
  });

  it('reports its steps and the kernels it traced, and draws them on stderr when asked', async () => {
    const reports: Array<[number, number, string | undefined]> = [];
    const small = { vocabSize: 64, hiddenSize: 16, layers: 12, heads: 2, maxPositions: 8, dropout: 0.1 };
    const o = new Options().setExecutionStrategy(PipelinedExecution()).showCompilationProgressBar(true);
    o.Training.gradientAccumulation(8);
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      await plan(() => gptLanguageModel(small, 1), {
        options: o,
        training: true,
        inputs: gptInputs(1, 8),
        progress: (done, total, detail) => reports.push([done, total, detail]),
      });
    } finally {
      process.stderr.write = write;
    }
    const steps = reports.filter(([, , detail]) => detail === undefined);
    expect(steps).toEqual(PLAN_STEPS.map((_, i) => [i + 1, PLAN_STEPS.length, undefined]));
    const traced = reports.filter(([, , detail]) => detail !== undefined);
    expect(traced.length).toBeGreaterThan(0);
    for (const [done, , detail] of traced) {
      expect(done).toBe(1);
      expect(detail).toMatch(/^\d+000 kernels traced$/);
    }
    expect(written.join('')).toMatch(/Planning: \[#+\.*\] 1\/6 trace: 2000 kernels traced/);
    expect(written.join('')).toMatch(/Planning: \[#{30}\] 6\/6 memory and time/);
  });
});
