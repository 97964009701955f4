/**
 * Worker IPUs (`opts.parallelIpus(true)`): every simulated IPU of a
 * multi-IPU executable runs in a worker thread, and the numbers are the
 * same, bit for bit, as in-process execution: outputs, losses and weights
 * after several training steps, for pipelined, sharded and replicated models,
 * with dropout (random numbers drawn on the main thread) and buffers.
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  BeginBlock,
  Block,
  Options,
  ParallelPhasedExecution,
  Phase,
  PipelinedExecution,
  ShardedExecution,
  Stage,
  inferenceModel,
  optim,
  trainingModel,
  type ExecutionStrategy,
} from 'poptfjs';
import { configureLoggingFromEnv } from '../../lib/common/log.js';
import type { PoplarExecutor } from '../../lib/executor/poplar_executor.js';
import { UnitDataflow } from '../../lib/runtime/worker_ipus/unit_dataflow.js';
import { WorkerIpuPool, WorkerStoppedError } from '../../lib/runtime/worker_ipus/worker_ipu_pool.js';
import { variableOf } from '../helpers.js';

const BLOCKS = ['b0', 'b1', 'b2', 'b3'];

/** Four blocks of dense layers, with dropout in the second; the same weights for the same seed. */
function blockModel(): tf.Sequential {
  const init = (s: number) => tf.initializers.glorotUniform({ seed: 200 + s });
  const model = tf.sequential({
    layers: [
      tf.layers.dense({ inputShape: [6], units: 12, activation: 'relu', kernelInitializer: init(0) }),
      tf.layers.dense({ units: 10, activation: 'tanh', kernelInitializer: init(1) }),
      tf.layers.dropout({ rate: 0.25 }),
      tf.layers.dense({ units: 8, activation: 'relu', kernelInitializer: init(2) }),
      tf.layers.dense({ units: 3, kernelInitializer: init(3) }),
    ],
  });
  [0, 1, 3, 4].forEach((layer, i) => BeginBlock(model.layers[layer]!, { userId: BLOCKS[i]! }));
  return model;
}

const twoStages = () => PipelinedExecution(Stage('b0', 'b1').ipu(0), Stage('b2', 'b3').ipu(1));
const fourStages = () => PipelinedExecution(...BLOCKS.map((b, i) => Stage(b).ipu(i)));
const sharded = () => ShardedExecution(...BLOCKS.map((b, i) => Stage(b).ipu(i)));
/** Two phases of two stages each, run in parallel: each unit spans two IPUs and runs on the worker of its first. */
const phased = () => {
  const s = ParallelPhasedExecution(Phase(Stage('b0'), Stage('b1')), Phase(Stage('b2'), Stage('b3')));
  s.phase(0).ipus(0, 2);
  s.phase(1).ipus(1, 3);
  return s;
};

interface Setup {
  strategy: () => ExecutionStrategy;
  iterations: number;
  accumulation?: number;
  replicas?: number;
}

function options(s: Setup, parallel: boolean): Options {
  const o = new Options()
    .deviceIterations(s.iterations)
    .replicationFactor(s.replicas ?? 1)
    .outputMode('All')
    .randomSeed(7)
    .parallelIpus(parallel);
  if (s.accumulation) o.Training.gradientAccumulation(s.accumulation);
  o.setExecutionStrategy(s.strategy());
  return o;
}

function samples(s: Setup, seed: number): { x: tf.Tensor; y: tf.Tensor } {
  const batch = 2 * s.iterations * (s.accumulation ?? 1) * (s.replicas ?? 1);
  return { x: tf.randomNormal([batch, 6], 0, 1, 'float32', seed), y: tf.randomNormal([batch, 3], 0, 1, 'float32', seed + 1) };
}

/** Trains a fresh model for `calls` calls; the outputs and losses of each call, then the weights. */
async function train(s: Setup, parallel: boolean, calls = 3): Promise<{ values: Float32Array[]; executor: PoplarExecutor }> {
  const model = blockModel();
  const executor = trainingModel(model, { options: options(s, parallel), loss: 'meanSquaredError', optimizer: new optim.Adam(model, { lr: 0.01 }) });
  const values: Float32Array[] = [];
  for (let call = 0; call < calls; call++) {
    const { x, y } = samples(s, 10 + call);
    const [out, loss] = await executor(x, y);
    values.push((out as tf.Tensor).dataSync() as Float32Array, loss.dataSync() as Float32Array);
    tf.dispose([x, y, out as tf.Tensor, loss]);
  }
  executor.copyWeightsToHost();
  values.push(...model.getWeights().map((w) => w.dataSync() as Float32Array));
  return { values, executor };
}

afterEach(() => {
  configureLoggingFromEnv({});
  vi.restoreAllMocks();
});

describe('worker IPUs give the same numbers as in-process execution', () => {
  const cases: Array<[string, Setup]> = [
    ['pipelined on 2 IPUs', { strategy: twoStages, iterations: 2, accumulation: 4 }],
    ['pipelined on 4 IPUs', { strategy: fourStages, iterations: 1, accumulation: 8 }],
    ['sharded on 4 IPUs', { strategy: sharded, iterations: 2, accumulation: 2 }],
    ['pipelined on 2 IPUs, 2 replicas', { strategy: twoStages, iterations: 1, accumulation: 3, replicas: 2 }],
    ['parallel phased on 4 IPUs', { strategy: phased, iterations: 1, accumulation: 2 }],
  ];
  for (const [name, setup] of cases) {
    it(`training, ${name}: outputs, losses and weights after three calls, bit for bit`, async () => {
      const inProcess = await train(setup, false);
      const workers = await train(setup, true);
      expect(workers.values).toEqual(inProcess.values);
      expect(workers.executor.irText()).toContain('poptfjs.RandomUniform');
      const measured = workers.executor.measuredOverlap()!;
      expect(measured.ipus.map((m) => m.ipu)).toEqual(setup.strategy === fourStages || setup.strategy === sharded ? [0, 1, 2, 3] : [0, 1]);
      expect(measured.ipus.every((m) => m.busyMs > 0 && m.computeMs <= m.busyMs && m.workItems > 0)).toBe(true);
      expect(measured.overlap).toBeCloseTo(measured.ipus.reduce((sum, m) => sum + m.busyMs, 0) / measured.wallMs, 9);
      expect(inProcess.executor.measuredOverlap()).toBeUndefined();
      workers.executor.destroy();
      inProcess.executor.destroy();
    });
  }

  for (const [name, strategy] of [
    ['pipelined on 4 IPUs', fourStages],
    ['sharded on 4 IPUs', sharded],
  ] as const) {
    it(`inference, ${name}`, async () => {
      const setup = { strategy, iterations: 4 };
      const { x } = samples(setup, 3);
      const run = async (parallel: boolean) => {
        const executor = inferenceModel(blockModel(), { options: options(setup, parallel) });
        const out = (await executor(x)) as tf.Tensor;
        const values = out.dataSync();
        executor.destroy();
        return values;
      };
      expect(await run(true)).toEqual(await run(false));
    });
  }

  /**
   * Two calls of an inference model that uses a buffer (from 0), with its
   * IPUs in-process or on worker threads: each call's outputs, then the
   * buffer copied to the host.
   */
  async function bufferRuns(
    name: string,
    forwardWith: (buffer: tf.Variable) => (x: tf.Tensor) => tf.Tensor,
    deviceIterations: number,
    inputShape: number[],
    parallel: boolean,
  ): Promise<number[][]> {
    const buffer = tf.variable(tf.tensor1d([0]), false, `${name}_${parallel}`);
    const executor = inferenceModel(forwardWith(buffer), { options: new Options().deviceIterations(deviceIterations).parallelIpus(parallel) });
    const outputs: number[][] = [];
    for (let call = 0; call < 2; call++) outputs.push([...((await executor(tf.ones(inputShape))) as tf.Tensor).dataSync()]);
    executor.copyWeightsToHost();
    outputs.push([...buffer.dataSync()]);
    executor.destroy();
    return outputs;
  }

  it('a buffer read on IPU 0 and written on IPU 1: reads wait for earlier writes, as in-process', async () => {
    const forwardWith = (counter: tf.Variable) => (x: tf.Tensor) => {
      const h = Block.run({ ipuId: 0 }, () => tf.mul(x, counter));
      return Block.run({ ipuId: 1 }, () => {
        counter.assign(tf.add(counter, 1));
        return tf.add(h, 1);
      });
    };
    const inProcess = await bufferRuns('counter', forwardWith, 4, [4, 2], false);
    expect(inProcess.at(-1)).toEqual([8]);
    expect(await bufferRuns('counter', forwardWith, 4, [4, 2], true)).toEqual(inProcess);
  });

  it('a buffer written on IPU 0 and read on IPU 1: each micro-batch reads the value its own write made', async () => {
    const forwardWith = (counter: tf.Variable) => (x: tf.Tensor) => {
      const h = Block.run({ ipuId: 0 }, () => {
        counter.assign(tf.add(counter, 1));
        return tf.mul(x, 2);
      });
      return Block.run({ ipuId: 1 }, () => tf.add(h, counter));
    };
    const inProcess = await bufferRuns('written_first', forwardWith, 2, [4, 1], false);
    expect(inProcess).toEqual([[3, 3, 4, 4], [5, 5, 6, 6], [4]]);
    expect(await bufferRuns('written_first', forwardWith, 2, [4, 1], true)).toEqual(inProcess);
  });
});

describe('worker IPU lifecycle and failures', () => {
  /** Two dense layers on two IPUs, the second followed by exp (which overflows on large inputs). */
  function overflowingModel() {
    const layers = [0, 1].map((i) => {
      const layer = tf.layers.dense({ units: 4, inputShape: [4], kernelInitializer: tf.initializers.glorotUniform({ seed: 40 + i }) });
      layer.apply(tf.zeros([1, 4]));
      return layer;
    });
    const forward = (x: tf.Tensor) => {
      const h = Block.run({ ipuId: 0 }, () => tf.tanh(layers[0]!.apply(x) as tf.Tensor));
      return Block.run({ ipuId: 1 }, () => tf.exp(tf.mul(layers[1]!.apply(h) as tf.Tensor, x)));
    };
    return { forward, weights: layers.flatMap((l) => l.trainableWeights.map(variableOf)) };
  }

  async function trainer(parallel: boolean) {
    const { forward, weights } = overflowingModel();
    const opts = new Options().parallelIpus(parallel);
    opts.Training.gradientAccumulation(3);
    opts.Precision.enableFloatingPointExceptions(true);
    return trainingModel(forward, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(weights, { lr: 0.05 }) });
  }

  it('a node that throws on a worker is an error naming the IPU and the node; the executor stays usable', async () => {
    const workers = await trainer(true);
    const inProcess = await trainer(false);
    const x = tf.randomNormal([6, 4], 0, 1, 'float32', 5);
    const y = tf.randomNormal([6, 4], 0, 1, 'float32', 6);
    const huge = tf.mul(x, 1e4);
    const error = await workers(huge, y).catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'floating_point_exception' });
    expect((error as Error).message).toMatch(/^IPU 1 \(worker thread\), unit F1 on micro-batch 0 of replica 0: floating-point exception: node #\d+ Exp/);
    await expect(inProcess(huge, y)).rejects.toThrow(/floating-point exception: node #\d+ Exp/);
    for (let call = 0; call < 2; call++) {
      const [, loss] = await workers(x, y);
      const [, reference] = await inProcess(x, y);
      expect(loss.dataSync()).toEqual(reference.dataSync());
    }
    workers.destroy();
    inProcess.destroy();
  });

  it('detachFromDevice ends the worker threads; the next call after attachToDevice starts them again', async () => {
    const executor = await trainer(true);
    const x = tf.randomNormal([6, 4], 0, 1, 'float32', 5);
    const y = tf.randomNormal([6, 4], 0, 1, 'float32', 6);
    await executor(x, y);
    const first = executor.measuredOverlap()!;
    executor.detachFromDevice();
    executor.attachToDevice();
    await executor(x, y);
    expect(executor.measuredOverlap()).not.toBe(first);
    expect(executor.getSummaryReport()).toMatch(/Measured on the host, last call, IPUs on worker threads \(parallelIpus\):\n {2}wall: [\d.]+ ms, overlap [\d.]+/);
    executor.destroy();
  });

  it('stochastic rounding runs in-process, with one WARN saying why', async () => {
    configureLoggingFromEnv({});
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    const { forward, weights } = overflowingModel();
    const opts = new Options().parallelIpus(true);
    opts.Training.gradientAccumulation(3);
    opts.Precision.enableStochasticRounding(true);
    const executor = trainingModel(forward, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(weights, { lr: 0.05 }) });
    const x = tf.randomNormal([6, 4], 0, 0.1, 'float32', 5);
    await executor(x, x);
    await executor(x, x);
    vi.restoreAllMocks();
    const warnings = lines.filter((l) => l.includes(' W: parallelIpus'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("parallelIpus: 'forward' runs its IPUs in-process, one after another: stochastic float16 rounding draws random numbers");
    expect(executor.measuredOverlap()).toBeUndefined();
    executor.destroy();
  });
});

describe('worker threads that stop', () => {
  it('a worker thread that exits is an error naming its IPU, not a hang', async () => {
    const layers = [0, 1].map(() => tf.layers.dense({ units: 2, inputShape: [2] }));
    const forward = (x: tf.Tensor) => Block.run({ ipuId: 1 }, () => layers[1]!.apply(Block.run({ ipuId: 0 }, () => layers[0]!.apply(x))) as tf.Tensor);
    const executor = inferenceModel(forward, { options: new Options().deviceIterations(2) });
    await executor.compile(tf.ones([2, 2]));
    const { executable } = executor;
    // A stand-in program that starts like a worker IPU and exits on its first message.
    const exitsOnWork = `
      const { workerData } = require('node:worker_threads');
      const signal = new Int32Array(workerData.signal);
      const notify = () => { Atomics.add(signal, 0, 1); Atomics.notify(signal, 0); };
      process.on('exit', () => { Atomics.store(signal, 1 + workerData.slot, 2); notify(); });
      Atomics.store(signal, 1 + workerData.slot, 1);
      workerData.port.postMessage({ kind: 'ready' });
      notify();
      workerData.port.on('message', () => process.exit(3));
    `;
    const pool = new WorkerIpuPool(executable, new UnitDataflow(executable.graph, executable.placement), tf.getBackend(), { filename: exitsOnWork, eval: true });
    try {
      pool.waitUntilReady();
      pool.workers.get(1)!.post({ kind: 'reset' });
      expect(() => {
        for (;;) pool.receive();
      }).toThrow(new WorkerStoppedError(1, 'during a call'));
      expect(new WorkerStoppedError(1, 'during a call').message).toBe('the worker thread of IPU 1 stopped during a call; the next call starts new worker threads');
    } finally {
      pool.terminate();
      executor.destroy();
    }
  });
});
