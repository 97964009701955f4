/**
 * The wasm `BatchMatMul` over batched, broadcast and transposed operands
 * (the SIMD routine's tiles, per-matrix XNNPACK products, one product of
 * stacked rows, the backend's own loop for small products) against the cpu
 * backend's kernel.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectRelativelyClose, randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';

interface Case {
  readonly a: number[];
  readonly b: number[];
  readonly transposeA?: boolean;
  readonly transposeB?: boolean;
  readonly what: string;
}

const CASES: readonly Case[] = [
  { a: [4, 64, 64], b: [4, 64, 64], what: 'attention heads, in tiles of 4 rows by 8 columns' },
  { a: [3, 37, 40], b: [3, 40, 44], what: 'rows beyond the last 4 and columns beyond the last 8, in tiles of one row and of 4 columns' },
  { a: [2, 3, 3000], b: [2, 3000, 4], what: 'fewer than 4 rows and 8 columns' },
  { a: [2, 36, 40], b: [2, 40, 42], what: 'columns not a multiple of 4, matrix by matrix' },
  { a: [4, 64, 48], b: [4, 40, 48], transposeB: true, what: 'a transposed right operand' },
  { a: [3, 48, 40], b: [3, 48, 56], transposeA: true, what: 'a transposed left operand' },
  { a: [2, 40, 36], b: [2, 48, 40], transposeA: true, transposeB: true, what: 'both operands transposed' },
  { a: [1, 40, 48], b: [3, 48, 40], what: 'one left matrix against a batch' },
  { a: [2, 1, 40, 32], b: [3, 32, 40], what: 'batch dimensions broadcast on both sides' },
  { a: [3, 2, 40, 36], b: [36, 50], what: 'a batch against one right matrix, as stacked rows' },
  { a: [3, 36, 40], b: [1, 50, 36], transposeA: true, transposeB: true, what: 'stacked rows with both operands transposed' },
  { a: [48, 40], b: [50, 40], transposeB: true, what: 'a single product with a transposed right operand' },
  { a: [64, 8, 8], b: [64, 8, 8], what: "small matrices (the backend's own loop)" },
  { a: [70, 64], b: [64, 80], what: "a single plain product (the backend's own kernel)" },
];

/**
 * The operands with their batch dimensions broadcast to a common shape: the
 * cpu kernel broadcasts a batch of one only (it indexes batches modulo their
 * count), so the reference multiplies whole batches.
 */
function broadcastBatches(a: tf.Tensor, b: tf.Tensor): { a: tf.Tensor; b: tf.Tensor } {
  const outer = tf.broadcast_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
  return { a: tf.broadcastTo(a, [...outer, ...a.shape.slice(-2)]), b: tf.broadcastTo(b, [...outer, ...b.shape.slice(-2)]) };
}

describe('wasm BatchMatMul', () => {
  beforeAll(useWasmTrainingBackend);

  CASES.forEach(({ a: aShape, b: bShape, transposeA = false, transposeB = false, what }, i) => {
    it(`multiplies [${aShape}]${transposeA ? 'ᵀ' : ''} by [${bShape}]${transposeB ? 'ᵀ' : ''} as the cpu backend does (${what}) and frees what it made`, () => {
      const a = randomTensor(aShape, 2 * i + 1);
      const b = randomTensor(bShape, 2 * i + 2);
      const attrs = { transposeA, transposeB };
      const before = tf.memory().numTensors;
      const dataBefore = tf.backend().numDataIds();
      const product = runKernel('BatchMatMul', { a, b }, attrs);
      expect(tf.memory().numTensors).toBe(before + 1);
      expect(tf.backend().numDataIds()).toBe(dataBefore + 1);
      const whole = broadcastBatches(a, b);
      expectRelativelyClose(product, runCpuKernel('BatchMatMul', whole, attrs));
      tf.dispose([a, b, product, whole.a, whole.b]);
    });
  });

  it('refuses operands whose inner dimensions differ, as tfjs does', () => {
    const a = tf.zeros([2, 40, 48]);
    const b = tf.zeros([2, 40, 48]);
    expect(() => runKernel('BatchMatMul', { a, b }, { transposeA: false, transposeB: false })).toThrow(/inner shapes \(48\) and \(40\)/);
    tf.dispose([a, b]);
  });
});
