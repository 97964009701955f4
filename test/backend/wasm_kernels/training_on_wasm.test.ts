/**
 * Training convolutional nets and embeddings on the wasm backend: gradients
 * and a training step equal the cpu backend's.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { registerWasmTrainingKernels, replacedWasmKernels, WASM_KERNEL_OVERRIDES } from '../../../lib/backend/wasm_kernels/index.js';
import { expectRelativelyClose, type KernelResult } from './kernel_reference.js';

const TRAINING_KERNELS = ['Conv2DBackpropFilter', 'DepthwiseConv2dNativeBackpropFilter', 'DepthwiseConv2dNativeBackpropInput', 'UnsortedSegmentSum'];

beforeAll(async () => {
  await initBackend('wasm');
});

function values(shape: number[], seed: number): Float32Array {
  return tf.tidy(() => tf.randomNormal(shape, 0, 1, 'float32', seed).dataSync() as Float32Array);
}

/** Runs `f` on `backend` and returns its tensors as plain results (disposing them), then makes wasm active again. */
async function on(backend: 'wasm' | 'cpu', f: () => tf.Tensor[] | Promise<tf.Tensor[]>): Promise<KernelResult[]> {
  await tf.setBackend(backend);
  try {
    const tensors = await f();
    const results = tensors.map((t) => ({ values: t.dataSync().slice(), shape: t.shape, dtype: t.dtype }));
    tf.dispose(tensors);
    return results;
  } finally {
    await tf.setBackend('wasm');
  }
}

function expectAllClose(actual: KernelResult[], expected: KernelResult[]): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((a, i) => tf.tidy(() => expectRelativelyClose(tf.tensor(a.values, a.shape, a.dtype), expected[i]!)));
}

describe('training on the wasm backend', () => {
  it('has the four training kernels the wasm backend lacks once poptfjs is loaded; registering again adds nothing', () => {
    for (const name of TRAINING_KERNELS) expect(tf.getKernel(name, 'wasm')).toBeDefined();
    expect(registerWasmTrainingKernels()).toEqual([]);
  });

  it("runs its overrides in place of the wasm backend's own kernels, and puts them back over whatever replaced them", () => {
    for (const config of WASM_KERNEL_OVERRIDES) {
      expect(tf.getKernel(config.kernelName, 'wasm')?.kernelFunc).toBe(config.kernelFunc);
      expect(replacedWasmKernels().get(config.kernelName)?.kernelFunc).not.toBe(config.kernelFunc);
    }
    expect(WASM_KERNEL_OVERRIDES.map((c) => c.kernelName)).toEqual([
      'Conv2DBackpropInput',
      'MaxPoolGrad',
      'AvgPoolGrad',
      'BatchMatMul',
      'Slice',
      'Concat',
      'Transpose',
      'FusedConv2D',
      'FusedDepthwiseConv2D',
      '_FusedMatMul',
      'MaxPool',
      'GatherV2',
    ]);
    const original = replacedWasmKernels().get('MaxPoolGrad')!;
    tf.unregisterKernel('MaxPoolGrad', 'wasm');
    tf.registerKernel(original);
    expect(registerWasmTrainingKernels()).toEqual(['MaxPoolGrad']);
    expect(tf.getKernel('MaxPoolGrad', 'wasm')?.kernelFunc).not.toBe(original.kernelFunc);
    expect(replacedWasmKernels().get('MaxPoolGrad')).toBe(original);
    expect(registerWasmTrainingKernels()).toEqual([]);
  });

  it('gives the gradients of conv2d → relu → depthwiseConv2d → mean the cpu backend gives', async () => {
    const xs = values([2, 9, 9, 3], 1);
    const w1s = values([3, 3, 3, 4], 2);
    const w2s = values([3, 3, 4, 2], 3);
    const grads = () =>
      tf.tidy(() => {
        const x = tf.tensor(xs, [2, 9, 9, 3]);
        const w1 = tf.tensor(w1s, [3, 3, 3, 4]);
        const w2 = tf.tensor(w2s, [3, 3, 4, 2]);
        const loss = (x: tf.Tensor, w1: tf.Tensor, w2: tf.Tensor) => {
          const hidden = tf.relu(tf.conv2d(x as tf.Tensor4D, w1 as tf.Tensor4D, 2, 'same'));
          return tf.mean(tf.square(tf.depthwiseConv2d(hidden, w2 as tf.Tensor4D, 1, 'valid')));
        };
        return tf.grads(loss)([x, w1, w2]);
      });
    expectAllClose(await on('wasm', grads), await on('cpu', grads));
  });

  it('gives the gradient of an embedding lookup (tf.gather) the cpu backend gives', async () => {
    const tables = values([10, 4], 4);
    const weights = values([2, 3, 4], 5);
    const grads = () =>
      tf.tidy(() => {
        const ids = tf.tensor2d(
          [
            [1, 3, 3],
            [9, 0, 1],
          ],
          undefined,
          'int32',
        );
        const w = tf.tensor(weights, [2, 3, 4]);
        const lookup = (table: tf.Tensor) => tf.sum(tf.mul(tf.gather(table, ids), w));
        const byColumn = (table: tf.Tensor) => tf.sum(tf.square(tf.gather(table, ids, 1)));
        return [tf.grad(lookup)(tf.tensor(tables, [10, 4])), tf.grad(byColumn)(tf.tensor(tables, [4, 10]))];
      });
    expectAllClose(await on('wasm', grads), await on('cpu', grads));
  });

  it('takes the training step of a CNN with max and average pooling as the cpu backend does', async () => {
    const xs = values([4, 12, 12, 1], 7);
    const labels = tf.tidy(() =>
      tf
        .oneHot(tf.tensor1d([3, 0, 1, 3], 'int32'), 4)
        .dataSync()
        .slice(),
    );
    const step = async () => {
      const init = (seed: number) => tf.initializers.glorotUniform({ seed });
      const model = tf.sequential({
        layers: [
          tf.layers.conv2d({ inputShape: [12, 12, 1], filters: 4, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: init(1) }),
          tf.layers.maxPooling2d({ poolSize: 2 }),
          tf.layers.conv2d({ filters: 6, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: init(2) }),
          tf.layers.averagePooling2d({ poolSize: 3, strides: 2, padding: 'same' }),
          tf.layers.flatten(),
          tf.layers.dense({ units: 4, activation: 'softmax', kernelInitializer: init(3) }),
        ],
      });
      model.compile({ optimizer: tf.train.sgd(0.1), loss: 'categoricalCrossentropy' });
      const x = tf.tensor(xs, [4, 12, 12, 1]);
      const y = tf.tensor(labels, [4, 4]);
      const loss = tf.scalar((await model.trainOnBatch(x, y)) as number);
      const after = model.getWeights().map((w) => w.clone());
      model.dispose();
      tf.dispose([x, y]);
      return [...after, loss];
    };
    expectAllClose(await on('wasm', step), await on('cpu', step));
  });

  it('takes the training step of a small CNN with an SGD optimizer as the cpu backend does', async () => {
    const xs = values([4, 8, 8, 1], 6);
    const labels = tf.tidy(() =>
      tf
        .oneHot(tf.tensor1d([0, 2, 1, 2], 'int32'), 3)
        .dataSync()
        .slice(),
    );
    const step = async () => {
      const model = tf.sequential({
        layers: [
          tf.layers.conv2d({
            inputShape: [8, 8, 1],
            filters: 4,
            kernelSize: 3,
            strides: 2,
            padding: 'same',
            activation: 'relu',
            kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }),
          }),
          tf.layers.depthwiseConv2d({ kernelSize: 3, depthMultiplier: 2, padding: 'same', depthwiseInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
          tf.layers.flatten(),
          tf.layers.dense({ units: 3, activation: 'softmax', kernelInitializer: tf.initializers.glorotUniform({ seed: 3 }) }),
        ],
      });
      model.compile({ optimizer: tf.train.sgd(0.1), loss: 'categoricalCrossentropy' });
      const x = tf.tensor(xs, [4, 8, 8, 1]);
      const y = tf.tensor(labels, [4, 3]);
      const before = model.getWeights().map((w) => w.clone());
      const loss = tf.scalar((await model.trainOnBatch(x, y)) as number);
      const after = model.getWeights().map((w) => w.clone());
      model.dispose();
      tf.dispose([x, y]);
      return [...before, ...after, loss];
    };
    const onWasm = await on('wasm', step);
    const onCpu = await on('cpu', step);
    expectAllClose(onWasm, onCpu);
    const weightCount = (onWasm.length - 1) / 2;
    expect(Array.from(onWasm[weightCount]!.values)).not.toEqual(Array.from(onWasm[0]!.values));
  });
});
