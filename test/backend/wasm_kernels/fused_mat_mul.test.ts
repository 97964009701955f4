import { availableParallelism } from 'node:os';
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MultiplyAddActivation } from '../../../lib/backend/multiply_add_attribute.js';
import { filterCopyBytes, PANEL_COLUMNS } from '../../../lib/backend/wasm_kernels/packed_filter.js';
import { MAX_WASM_THREADS } from '../../../lib/backend/wasm_threads.js';
import { withRelaxedSimd } from '../../helpers.js';
import { expectRelativelyClose, onOneThreadAndWithHelper, randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';

withRelaxedSimd();
beforeAll(useWasmTrainingBackend);

/** A product for _FusedMatMul: the shapes of `a` and `b`, transposes, bias, activation. */
interface ProductCase {
  readonly a: number[];
  readonly b: number[];
  readonly transposeA?: boolean;
  readonly transposeB?: boolean;
  readonly bias: boolean;
  readonly activation: MultiplyAddActivation | 'elu';
}

/** Cases the routine computes: one right matrix, neither operand transposed, columns in fours. */
const ROUTINE_CASES: ProductCase[] = [
  { a: [1, 5, 12], b: [1, 12, 8], bias: false, activation: 'linear' },
  // Rows of several matrices of `a` against one `b`; a tail of 4 columns past the panels of 8.
  { a: [2, 3, 16], b: [1, 16, 20], bias: true, activation: 'relu6' },
  { a: [1, 7, 9], b: [1, 9, 12], bias: true, activation: 'relu' },
  // A transformer encoder's feed-forward products: 64 rows, 256 → 1024 (two panels of 512 columns) and back.
  { a: [1, 64, 256], b: [1, 256, 1024], bias: true, activation: 'relu' },
  { a: [1, 64, 1024], b: [1, 1024, 256], bias: true, activation: 'linear' },
];

/** Unmarked cases whose bias tfjs's own wasm kernel (4.22) adds wrongly: batches of more than one product, transposed operands. */
const BIAS_CASES: ProductCase[] = [
  { a: [2, 3, 16], b: [1, 16, 20], bias: true, activation: 'relu' },
  { a: [1, 3, 16], b: [2, 16, 20], bias: true, activation: 'linear' },
  { a: [2, 3, 16], b: [2, 16, 20], bias: true, activation: 'elu' },
  { a: [2, 16, 3], b: [1, 16, 20], transposeA: true, bias: true, activation: 'relu6' },
  { a: [1, 3, 16], b: [1, 20, 16], transposeB: true, bias: true, activation: 'linear' },
  { a: [1, 16, 3], b: [2, 20, 16], transposeA: true, transposeB: true, bias: true, activation: 'relu' },
];

/** Cases left to the backend's own kernel. */
const OWN_CASES: ProductCase[] = [
  { a: [1, 6, 8], b: [1, 12, 8], transposeB: true, bias: true, activation: 'relu' },
  { a: [2, 6, 8], b: [2, 8, 12], bias: false, activation: 'linear' },
  { a: [1, 6, 8], b: [1, 8, 6], bias: true, activation: 'relu' },
  { a: [1, 6, 8], b: [1, 8, 12], bias: true, activation: 'elu' },
];

function inputsOf(c: ProductCase, seed: number): Record<string, tf.Tensor> {
  const a = randomTensor(c.a, seed);
  const b = randomTensor(c.b, seed + 1);
  return c.bias ? { a, b, bias: randomTensor([c.b[c.transposeB ? c.b.length - 2 : c.b.length - 1]!], seed + 2) } : { a, b };
}

const attrsOf = (c: ProductCase, marked: boolean) => ({
  transposeA: c.transposeA ?? false,
  transposeB: c.transposeB ?? false,
  activation: c.activation,
  ...(marked ? { multiplyAdd: 'fused' } : {}),
});

const describeCase = (c: ProductCase) => `${c.a.join('×')} × ${c.b.join('×')}${c.transposeB ? 'ᵀ' : ''}, ${c.bias ? 'bias' : 'no bias'}, ${c.activation}`;

describe('a marked _FusedMatMul on wasm', () => {
  it.each(ROUTINE_CASES.map((c, i) => [describeCase(c), c, i] as const))("%s: poptfjs's product, within float rounding of the cpu backend's", (_, c, i) => {
    const inputs = inputsOf(c, 10 * i);
    const marked = runKernel('_FusedMatMul', inputs, attrsOf(c, true));
    const own = runKernel('_FusedMatMul', inputs, attrsOf(c, false));
    expect(marked.shape).toEqual(own.shape);
    expectRelativelyClose(marked, runCpuKernel('_FusedMatMul', inputs, attrsOf(c, false)), 1e-5);
    if (c.a.at(-1)! >= 256) {
      // Fused multiply-adds over a long sum: not XNNPACK's bits.
      expect(Array.from(marked.dataSync())).not.toEqual(Array.from(own.dataSync()));
    }
    tf.dispose([marked, own, ...Object.values(inputs)]);
  });

  it.each(OWN_CASES.map((c, i) => [describeCase(c), c, i] as const))("%s: the backend's own kernel, bit for bit", (_, c, i) => {
    const inputs = inputsOf(c, 100 + 10 * i);
    const marked = runKernel('_FusedMatMul', inputs, attrsOf(c, true));
    const own = runKernel('_FusedMatMul', inputs, attrsOf(c, false));
    expect(Array.from(marked.dataSync())).toEqual(Array.from(own.dataSync()));
    tf.dispose([marked, own, ...Object.values(inputs)]);
  });

  it('packs a weight once, in panels of 8 columns, and frees the packed copy with the weight', () => {
    const wasm = tf.backend() as BackendWasm;
    const c = ROUTINE_CASES[1]!;
    const inputs = inputsOf(c, 7);
    const before = filterCopyBytes(wasm);
    runKernel('_FusedMatMul', inputs, attrsOf(c, true)).dispose();
    runKernel('_FusedMatMul', inputs, attrsOf(c, true)).dispose();
    // [16, 20]: three panels of 16 rows by 8 columns, the last one's 4 beyond the 20th zeros.
    expect(filterCopyBytes(wasm) - before).toBe(3 * 16 * PANEL_COLUMNS * 4);
    inputs.b!.dispose();
    expect(filterCopyBytes(wasm)).toBe(before);
    tf.dispose(Object.values(inputs));
  });

  it.skipIf(Math.min(availableParallelism(), MAX_WASM_THREADS) < 2 || process.env.POPTFJS_WASM_THREADS !== undefined)(
    'gives the same numbers bit for bit on one thread and with the helper thread',
    () => {
      const c = ROUTINE_CASES[3]!;
      const inputs = inputsOf(c, 3);
      const [one, withHelper] = onOneThreadAndWithHelper(() => Array.from(runKernel('_FusedMatMul', inputs, attrsOf(c, true)).dataSync()));
      expect(withHelper).toEqual(one);
      tf.dispose(Object.values(inputs));
    },
  );
});

describe('an unmarked _FusedMatMul with a bias on wasm', () => {
  it.each(BIAS_CASES.map((c, i) => [describeCase(c), c, i] as const))("%s: the cpu backend's values, within float rounding", (_, c, i) => {
    const inputs = inputsOf(c, 200 + 10 * i);
    const out = runKernel('_FusedMatMul', inputs, attrsOf(c, false));
    expectRelativelyClose(out, runCpuKernel('_FusedMatMul', inputs, attrsOf(c, false)), 1e-5);
    tf.dispose([out, ...Object.values(inputs)]);
  });
});
