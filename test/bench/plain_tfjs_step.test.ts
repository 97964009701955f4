import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { plainTfjsCase } from '../../bench/plain_tfjs_step.js';
import { replacedWasmKernels, WASM_KERNEL_OVERRIDES } from '../../lib/backend/wasm_kernels/index.js';
import { useWasmTrainingBackend } from '../backend/wasm_kernels/kernel_reference.js';

beforeAll(useWasmTrainingBackend);

/** A dense layer on a batch of 8: its step calls BatchMatMul (the gradients' products). */
const DENSE = {
  model: () =>
    tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [6], activation: 'softmax', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) })] }),
  batch: () => ({ x: tf.randomNormal([8, 6], 0, 1, 'float32', 2), y: tf.oneHot(tf.tensor1d([0, 1, 2, 3, 0, 1, 2, 3], 'int32'), 4).toFloat() }),
};

describe('the plain tfjs training step of the benchmarks', () => {
  it("runs on the wasm backend's own kernels, not poptfjs's overrides, and registers the overrides again after", async () => {
    const own = replacedWasmKernels().get('BatchMatMul')!;
    const override = WASM_KERNEL_OVERRIDES.find((c) => c.kernelName === 'BatchMatMul')!;
    const ownKernel = own.kernelFunc;
    const overrideKernel = override.kernelFunc;
    const calls = { own: 0, override: 0 };
    own.kernelFunc = (args) => (calls.own++, ownKernel(args));
    override.kernelFunc = (args) => (calls.override++, overrideKernel(args));
    try {
      const plain = await plainTfjsCase(DENSE, 'wasm');
      await plain.step();
      expect(calls.own).toBeGreaterThan(0);
      expect(calls.override).toBe(0);
      for (const config of WASM_KERNEL_OVERRIDES) expect(tf.getKernel(config.kernelName, 'wasm')?.kernelFunc).toBe(config.kernelFunc);
    } finally {
      own.kernelFunc = ownKernel;
      override.kernelFunc = overrideKernel;
    }
  });
});
