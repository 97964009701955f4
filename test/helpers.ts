/**
 * Shared test helpers: tolerance checks against independent references, a small IPU target for hand-computed costs,
 * the CNN of the training benchmarks, and WebAssembly relaxed SIMD for a test file.
 */
import v8 from 'node:v8';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, expect } from 'vitest';
import { relaxedSimdSupported } from '../lib/backend/wasm_kernels/wasm_simd_routine.js';
import type { KernelTarget } from '../lib/ipu/kernel_cycles.js';

/** Asserts two tensors have the same shape and values within `rtol`/`atol`. */
export function expectClose(actual: tf.Tensor, expected: tf.Tensor, rtol = 1e-5, atol = 1e-6): void {
  expect(actual.shape).toEqual(expected.shape);
  const a = actual.dataSync();
  const e = expected.dataSync();
  for (let i = 0; i < a.length; i++) {
    const tol = atol + rtol * Math.abs(e[i]!);
    if (!(Math.abs(a[i]! - e[i]!) <= tol)) {
      throw new Error(`element ${i}: ${a[i]} vs expected ${e[i]} (tolerance ${tol})`);
    }
  }
}

/** The tf.Variable holding a layers-model weight (tfjs-layers keeps it in `LayerVariable.val`, which its types hide). */
export function variableOf(weight: tf.LayerVariable): tf.Variable {
  return (weight as unknown as { val: tf.Variable }).val;
}

/** The number of tensors alive in the engine. */
export function liveTensors(): number {
  return tf.memory().numTensors;
}

/**
 * A small IPU target for hand-computing kernel costs: the GC200's AMP multiply-accumulates per tile per cycle
 * (64 fp16 with fp16 partials, 32 fp16 with fp32 partials, 16 fp32), Poplar's default available memory proportion
 * of 0.6 and float32 partials, on `tiles` tiles of `memoryPerTile` bytes with a host link of `hostBytesPerCycle`
 * bytes a cycle.
 */
export function smallIpuTarget({
  tiles,
  memoryPerTile = 1 << 20,
  hostBytesPerCycle = 4,
}: {
  tiles: number;
  memoryPerTile?: number;
  hostBytesPerCycle?: number;
}): KernelTarget {
  return {
    tiles,
    memoryPerTile,
    availableMemoryProportion: 0.6,
    macsPerCycle: { float16: 64, float16Float32Partials: 32, float32: 16 },
    halfPartials: false,
    hostBytesPerCycle,
  };
}

/**
 * The CNN of the training benchmarks (bench/cnn_training_step.ts): conv 16, max pool, conv 32, dense 10 on 28×28×1
 * images, relu and softmax, with its biases drawn by `biasInitializer` (zeros by default).
 */
export function smallCnn(biasInitializer: 'zeros' | 'randomNormal' = 'zeros'): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.conv2d({ inputShape: [28, 28, 1], filters: 16, kernelSize: 3, padding: 'same', activation: 'relu', biasInitializer }),
      tf.layers.maxPooling2d({ poolSize: 2 }),
      tf.layers.conv2d({ filters: 32, kernelSize: 3, padding: 'same', activation: 'relu', biasInitializer }),
      tf.layers.flatten(),
      tf.layers.dense({ units: 10, activation: 'softmax' }),
    ],
  });
}

/**
 * Turns WebAssembly relaxed SIMD on for the calling test file (Node 20 compiles it behind
 * `--experimental-wasm-relaxed-simd`, Node 22 by default), and back off after it where it was off.
 */
export function withRelaxedSimd(): void {
  let before = false;
  beforeAll(() => {
    before = relaxedSimdSupported();
    v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  });
  afterAll(() => {
    if (!before) v8.setFlagsFromString('--no-experimental-wasm-relaxed-simd');
  });
}
