/**
 * The host's memory: a step's host memory is estimated at compile from its
 * graph and follows the micro-batch, not the host batch; a step that will not
 * fit the heap is refused at once with the figures and what would help; a
 * backend that runs out of memory while tracing or running becomes a
 * HostMemoryError naming the model, the phase, the micro-batch and the heap.
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BeginBlock,
  HostMemoryError,
  Options,
  OutOfMemoryError,
  hostMemoryPeak,
  inferenceModel,
  optim,
  resetHostMemoryPeak,
  trainingModel,
  type HostMemoryEstimate,
} from 'poptfjs';
import { HOST_MEMORY_LIMIT_VARIABLE, hostHeap, hostMemoryLimitFromEnvironment } from '../../lib/backend/host_heap.js';
import { withRelaxedSimd } from '../helpers.js';
import type { PoplarExecutor } from '../../lib/executor/poplar_executor.js';
import { mobilenetV2 } from '../../examples/models/mobilenet_v2.js';

const WIDTH = 256;

/** Four dense layers of {@link WIDTH} units; the same weights every time. */
function mlp(): tf.Sequential {
  return tf.sequential({
    layers: Array.from({ length: 4 }, (_, i) =>
      tf.layers.dense({ units: WIDTH, inputShape: [WIDTH], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 10 + i }) }),
    ),
  });
}

function batch(n: number): [tf.Tensor, tf.Tensor] {
  return [tf.randomNormal([n, WIDTH], 0, 1, 'float32', 1), tf.randomNormal([n, WIDTH], 0, 1, 'float32', 2)];
}

/** Compiles the executor for the batch and returns its host-memory estimate; then disposes of all of them. */
async function compiledEstimate(model: tf.LayersModel, executor: PoplarExecutor, [x, y]: [tf.Tensor, tf.Tensor]): Promise<HostMemoryEstimate> {
  await executor.compile(x, y);
  const estimate = executor.hostMemory()!;
  executor.destroy();
  tf.dispose([x, y]);
  model.dispose();
  return estimate;
}

/** The host memory estimated for a training step of the MLP at `hostBatch` with gradient accumulation `accumulation`. */
function estimateFor(hostBatch: number, accumulation: number, configure: (o: Options, m: tf.Sequential) => void = () => {}): Promise<HostMemoryEstimate> {
  const model = mlp();
  const opts = new Options();
  opts.Training.gradientAccumulation(accumulation);
  configure(opts, model);
  const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: new optim.Adam(model, { lr: 1e-3 }) });
  return compiledEstimate(model, executor, batch(hostBatch));
}

/** Four convolutions on 32×32 images and a classifier (activations far larger than weights), pipelined two per IPU or on one. */
function convModel({ pipelined = true, parallelIpus = false, accumulation = 8 } = {}) {
  const conv = (seed: number, inputShape?: number[]) =>
    tf.layers.conv2d({
      filters: 16,
      kernelSize: 3,
      padding: 'same',
      activation: 'relu',
      kernelInitializer: tf.initializers.glorotUniform({ seed }),
      ...(inputShape ? { inputShape } : {}),
    });
  const model = tf.sequential({
    layers: [
      conv(1, [32, 32, 3]),
      conv(2),
      conv(3),
      conv(4),
      tf.layers.flatten(),
      tf.layers.dense({ units: 10, kernelInitializer: tf.initializers.glorotUniform({ seed: 5 }) }),
    ],
  });
  if (pipelined) model.layers.forEach((layer, i) => BeginBlock(layer, { ipuId: i < 2 ? 0 : 1 }));
  const opts = new Options().parallelIpus(parallelIpus);
  opts.Training.gradientAccumulation(accumulation);
  return { model, executor: trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 1e-3 }) }) };
}

function imageBatch(n: number): [tf.Tensor, tf.Tensor] {
  return [tf.randomNormal([n, 32, 32, 3], 0, 1, 'float32', 3), tf.randomNormal([n, 10], 0, 1, 'float32', 4)];
}

function convEstimate(options: Parameters<typeof convModel>[0]): Promise<HostMemoryEstimate> {
  const { model, executor } = convModel(options);
  return compiledEstimate(model, executor, imageBatch(64));
}

afterEach(() => {
  delete process.env[HOST_MEMORY_LIMIT_VARIABLE];
});

describe('host memory estimate', () => {
  it('follows the micro-batch: a host batch of 64 with gradientAccumulation(16) needs the activations of micro-batch 4', async () => {
    const micro4 = await estimateFor(4, 1);
    const host64 = await estimateFor(64, 16);
    const micro8 = await estimateFor(8, 1);
    expect(host64.activations).toBe(micro4.activations);
    expect(micro8.activations).toBeGreaterThan(micro4.activations);
    // Only the call's inputs grow with the host batch: 64 × 256 floats of data and as many of targets.
    expect(host64.inputs - micro4.inputs).toBe(2 * 60 * WIDTH * 4);
    // Weights and their device copies (and, held from call to call, the transposes of the last three kernels that the
    // backward pass reads, made from the weights alone), Adam's two state tensors, and with accumulation the accumulated
    // gradient, all float32.
    const parameters = 4 * (WIDTH * WIDTH + WIDTH);
    expect(micro4.weights).toBe(2 * parameters * 4 + 3 * WIDTH * WIDTH * 4);
    expect(micro4.optimizer).toBe(2 * parameters * 4);
    expect(host64.optimizer).toBe(3 * parameters * 4);
    expect(micro4.mainThread).toBe(micro4.weights + micro4.optimizer + micro4.inputs + micro4.activations);
    expect(micro4.workers).toEqual([]);
  });

  it('is what the tensors take at the peak of a step, within a tenth', async () => {
    for (const accumulation of [1, 4]) {
      const before = tf.memory().numBytes;
      const { model, executor } = convModel({ pipelined: false, accumulation });
      const [x, y] = imageBatch(64);
      await executor.compile(x, y);
      resetHostMemoryPeak();
      const [out, loss] = await executor(x, y);
      const measured = hostMemoryPeak() - before;
      const estimated = executor.hostMemory()!.mainThread;
      expect(Math.abs(estimated - measured) / measured).toBeLessThan(0.1);
      executor.destroy();
      tf.dispose([x, y, out as tf.Tensor, loss]);
      model.dispose();
    }
  });

  it('with worker IPUs, gives each its heap: the weights its nodes read and its activations', async () => {
    const onWorkers = await estimateFor(32, 8, (o, m) => {
      m.layers.forEach((layer, i) => BeginBlock(layer, { ipuId: i < 2 ? 0 : 1 }));
      o.parallelIpus(true);
    });
    const layerWeights = (WIDTH * WIDTH + WIDTH) * 4;
    expect(onWorkers.workers.map((w) => [w.ipu, w.weights])).toEqual([
      [0, 2 * layerWeights],
      [1, 2 * layerWeights],
    ]);
    for (const w of onWorkers.workers) expect(w.total).toBe(w.weights + w.activations);
    expect(onWorkers.activations).toBe(0);
    expect(onWorkers.workers.every((w) => w.activations > 0)).toBe(true);
  });
});

describe('host memory estimate of convolutions run with fused multiply-adds', () => {
  withRelaxedSimd();

  it('counts the transformed filters F(2 × 2, 3 × 3) keeps, and is what the step takes with them, within a tenth', async () => {
    const channels = 256;
    const conv = (seed: number) =>
      tf.layers.conv2d({
        filters: channels,
        kernelSize: 3,
        padding: 'same',
        activation: 'relu',
        kernelInitializer: tf.initializers.glorotUniform({ seed }),
        inputShape: [8, 8, channels],
      });
    const before = hostHeap().used();
    const model = tf.sequential({ layers: [conv(1), conv(2)] });
    const x = tf.randomNormal([1, 8, 8, channels], 0, 1, 'float32', 5);
    const executor = inferenceModel(model);
    // The first call makes the copies (the last one after the last check of the heap); the second holds them throughout.
    tf.dispose((await executor(x)) as tf.Tensor);
    resetHostMemoryPeak();
    const y = (await executor(x)) as tf.Tensor;
    const measured = hostMemoryPeak() - before;
    const estimate = executor.hostMemory()!;
    const parameters = 2 * (9 * channels * channels + channels) * 4;
    // Each convolution's 16 transformed components, [256 in, 256 out] each (32 whole panels of 8 output channels).
    const transformed = 2 * 16 * channels * channels * 4;
    expect(estimate.weights).toBe(2 * parameters + transformed);
    expect(Math.abs(estimate.mainThread - measured) / measured).toBeLessThan(0.1);
    executor.destroy();
    tf.dispose([x, y]);
    model.dispose();
    // The copies go with their filters.
    expect(hostHeap().used()).toBe(before);
  });
});

describe('host memory limits', () => {
  it('refuses a step that will not fit the heap at once, with the figures and the accumulation that fits', async () => {
    const whole = await convEstimate({ pipelined: false, accumulation: 1 });
    // A heap whose tensor share (7/8) holds everything but half the activations.
    const limit = Math.ceil(((whole.mainThread - whole.activations / 2) * 8) / 7);
    process.env[HOST_MEMORY_LIMIT_VARIABLE] = String(limit);
    const { model, executor } = convModel({ pipelined: false, accumulation: 1 });
    const [x, y] = imageBatch(64);
    const error = await executor.compile(x, y).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HostMemoryError);
    const message = (error as Error).message;
    expect(message).toMatch(
      new RegExp(
        `^model '${model.name}': a training step at micro-batch 64 needs about [\\d.]+ MiB of host memory on the main thread \\(activations [\\d.]+ MiB, ` +
          `weights and the device's copies [\\d.]+ [KM]?i?B, optimizer state and gradients [\\d.]+ [KM]?i?B, inputs [\\d.]+ [KM]?i?B\\), ` +
          `more than the [\\d.]+ MiB tensors may take of a heap of ${limit} \\(${HOST_MEMORY_LIMIT_VARIABLE}\\), so it would run out of memory while running\\. ` +
          `What would help: opts\\.Training\\.gradientAccumulation\\((\\d+)\\) or more, for micro-batches of (\\d+) from the same host batch; ` +
          `pipelining the model over several IPUs computed on worker IPUs.*; the cpu backend`,
      ),
    );
    const [, accumulation, micro] = /gradientAccumulation\((\d+)\) or more, for micro-batches of (\d+)/.exec(message)!;
    expect(Number(accumulation) * Number(micro)).toBe(64);
    expect(Number(accumulation)).toBeGreaterThan(1);
    executor.destroy();
    model.dispose();
    // Nothing was half-done: the advice, followed, trains under the same limit.
    const advised = convModel({ pipelined: false, accumulation: Number(accumulation) });
    const [, loss] = await advised.executor(x, y);
    expect(Number.isFinite(loss.dataSync()[0])).toBe(true);
    advised.executor.destroy();
    tf.dispose([x, y, loss]);
    advised.model.dispose();
  });

  it('a pipelined model that fits only as worker IPUs is told so, and trains on them', async () => {
    const inProcess = await convEstimate({ parallelIpus: false });
    const onWorkers = await convEstimate({ parallelIpus: true });
    const largestOnWorkers = Math.max(onWorkers.mainThread, ...onWorkers.workers.map((w) => w.total));
    expect(largestOnWorkers).toBeLessThan(inProcess.mainThread);
    process.env[HOST_MEMORY_LIMIT_VARIABLE] = String(Math.ceil((((largestOnWorkers + inProcess.mainThread) / 2) * 8) / 7));
    const refused = convModel({ parallelIpus: false });
    const [x, y] = imageBatch(64);
    await expect(refused.executor(x, y)).rejects.toThrow(
      /on the main thread .* What would help: .*worker IPUs \(opts\.parallelIpus\(true\)\): each IPU's nodes would compute in a heap of their own, the fullest \(IPU \d\) needing about [\d.]+ [KM]iB, which fits/,
    );
    refused.executor.destroy();
    const workers = convModel({ parallelIpus: true });
    const [, loss] = await workers.executor(x, y);
    expect(loss.size).toBe(1);
    expect(Number.isFinite(loss.dataSync()[0])).toBe(true);
    workers.executor.destroy();
    tf.dispose([x, y, loss]);
    refused.model.dispose();
    workers.model.dispose();
  });

  it('a worker IPU checks its own heap, and its error names it', async () => {
    const { model, executor } = convModel({ parallelIpus: true });
    const [x, y] = imageBatch(64);
    await executor.compile(x, y);
    // The worker threads start with the first call, with this limit; the main thread's was read when compiling.
    process.env[HOST_MEMORY_LIMIT_VARIABLE] = '256KiB';
    await expect(executor(x, y)).rejects.toThrow(
      /IPU 0 \(worker thread\).*: model '[^']+' ran out of host memory on the worker thread of IPU 0 while running at micro-batch 8: its tensors would take [\d.]+ KiB, more than the 224\.0 KiB tensors may take of a heap of 256KiB \(POPTFJS_HOST_MEMORY_LIMIT\)/,
    );
    executor.destroy();
    tf.dispose([x, y]);
    model.dispose();
  });

  it('reads the limit as bytes or with a unit, and refuses a value it cannot read', () => {
    expect(hostMemoryLimitFromEnvironment('512MiB')).toBe(512 * 2 ** 20);
    expect(hostMemoryLimitFromEnvironment('1.5 GiB')).toBe(1.5 * 2 ** 30);
    expect(hostMemoryLimitFromEnvironment('4096')).toBe(4096);
    expect(hostMemoryLimitFromEnvironment(undefined)).toBeUndefined();
    expect(() => hostMemoryLimitFromEnvironment('lots')).toThrow(
      `${HOST_MEMORY_LIMIT_VARIABLE}='lots' is not a memory size; expected bytes or a number with KiB, MiB or GiB (e.g. 512MiB)`,
    );
  });
});

describe('a backend that runs out of memory', () => {
  /** The error of a WebAssembly trap (the WebAssembly API is not in this project's type libraries). */
  const WebAssemblyRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: ErrorConstructor } }).WebAssembly.RuntimeError;

  /** A kernel that passes its input through, and from call `failAt` on fails as the wasm backend does when its heap is exhausted. */
  function outOfMemoryKernel(failAt: number): string {
    const kernelName = `PoptfjsTestOutOfMemory${failAt}`;
    let calls = 0;
    tf.registerKernel({
      kernelName,
      backendName: tf.getBackend(),
      kernelFunc: ({ inputs, backend }) => {
        if (calls++ >= failAt) throw new WebAssemblyRuntimeError('memory access out of bounds');
        const x = inputs.x as tf.TensorInfo;
        (backend as unknown as { incRef(dataId: tf.DataId): void }).incRef(x.dataId);
        return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
      },
    });
    return kernelName;
  }

  /** A function model whose dense layer's output goes through `kernel`. */
  function functionModel(kernel: string) {
    const weight = tf.variable(tf.randomNormal([8, 4], 0, 1, 'float32', 9), true, `oom_weight_${kernel}`);
    const model = (x: tf.Tensor) => tf.engine().runKernel(kernel, { x: tf.matMul(x, weight) }, {}) as tf.Tensor;
    return { model, weight };
  }

  it('while tracing: a HostMemoryError naming the model, the phase, the micro-batch and the heap, within the call', async () => {
    const kernel = outOfMemoryKernel(0);
    const { model, weight } = functionModel(kernel);
    const opts = new Options().deviceIterations(2);
    const executor = inferenceModel(model, { options: opts });
    const x = tf.ones([6, 8]);
    const error = await executor(x).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HostMemoryError);
    expect((error as Error).message).toMatch(
      /^model 'model' ran out of host memory on the main thread while tracing at micro-batch 3: the backend failed to allocate \(RuntimeError: memory access out of bounds\) with its tensors taking [\d.]+ [KMG]?i?B of the [\d.]+ GiB tensors may take of the wasm backend's 4 GiB heap \(wasm32\)\. What would help: smaller micro-batches from the same host batch \(opts\.deviceIterations\(4\) or more\)/,
    );
    expect(((error as Error).cause as Error).message).toContain('memory access out of bounds');
    executor.destroy();
    tf.dispose([x, weight]);
    tf.unregisterKernel(kernel, tf.getBackend());
  });

  it('while running: a HostMemoryError naming the running phase and the micro-batch', async () => {
    const kernel = outOfMemoryKernel(1);
    const { model, weight } = functionModel(kernel);
    const executor = inferenceModel(model);
    const x = tf.ones([6, 8]);
    await expect(executor(x)).rejects.toThrow(
      /^model 'model' ran out of host memory on the main thread while running at micro-batch 6: .*What would help: smaller micro-batches from the same host batch \(opts\.deviceIterations\(2\) or more\)/,
    );
    executor.destroy();
    tf.dispose([x, weight]);
    tf.unregisterKernel(kernel, tf.getBackend());
  });
});

describe('MobileNetV2 at 224×224, wrapped with the default options', () => {
  it('at batch 16, fails at compile within the call: the micro-batch does not fit an IPU, and what would help', { timeout: 60_000 }, async () => {
    const model = mobilenetV2({ classes: 10 });
    const executor = trainingModel(model, { loss: 'categoricalCrossentropy' });
    const x = tf.randomUniform([16, 224, 224, 3], -1, 1, 'float32', 1);
    const y = tf.oneHot(
      tf.tensor1d(
        Array.from({ length: 16 }, (_, i) => i % 10),
        'int32',
      ),
      10,
    );
    const error = await executor(x, y).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutOfMemoryError);
    expect((error as Error).message).toMatch(
      /^IPU 0 is out of memory compiling model 'mobilenetv2_1\.00_224' at micro-batch 16: it needs [\d.]+ GiB of its 897\.0 MiB .*What would help: .*or use a smaller micro-batch \(it is 16 now\)/,
    );
    executor.destroy();
    tf.dispose([x, y]);
    model.dispose();
  });
});
