import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { fallbackCounts, fallbackKernel, registerCpuFallbacks } from '../../lib/backend/cpu_fallback.js';
import { configureLoggingFromEnv } from '../../lib/common/log.js';
import { expectRelativelyClose, randomTensor, runCpuKernel, useWasmTrainingBackend } from './wasm_kernels/kernel_reference.js';

/** Kernels of the cpu backend the wasm backend lacks, even with the training kernels. */
const EINSUM = 'Einsum';
const RAGGED_RANGE = 'RaggedRange';

function captureStderr(): { text: () => string; restore: () => void } {
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  return { text: () => chunks.join(''), restore: () => spy.mockRestore() };
}

beforeAll(async () => {
  await useWasmTrainingBackend();
  configureLoggingFromEnv({});
});

describe('cpu fallback kernels', () => {
  it('are registered when the backend is chosen, for the kernels it lacks and the cpu backend has', () => {
    expect(tf.getKernel(EINSUM, 'wasm')).toBeDefined();
    expect(tf.getKernel(RAGGED_RANGE, 'wasm')).toBeDefined();
    expect(registerCpuFallbacks()).toEqual([]);
    expect(fallbackKernel(EINSUM)).toBeUndefined();
    expect(fallbackKernel('Add')).toBeUndefined();
    expect(fallbackKernel('NoSuchKernel')).toBeUndefined();
  });

  it('run a kernel on the cpu backend for the wasm backend, warn once and count each run', () => {
    const a = randomTensor([3, 4, 5], 1);
    const b = randomTensor([3, 5, 2], 2);
    const countBefore = fallbackCounts().get(EINSUM) ?? 0;
    const stderr = captureStderr();
    const first = tf.einsum('bij,bjk->bik', a, b);
    const second = tf.einsum('bij,bjk->bik', a, b);
    stderr.restore();
    expect(tf.getBackend()).toBe('wasm');
    const expected = runCpuKernel(EINSUM, [a, b], { equation: 'bij,bjk->bik' });
    expectRelativelyClose(first, expected);
    expectRelativelyClose(second, expected);
    const warnings = stderr
      .text()
      .split('\n')
      .filter((line) => line.includes('poptfjs:devicex'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/ W: kernel 'Einsum' is not implemented by the 'wasm' backend; running it on the 'cpu' backend/);
    expect(fallbackCounts().get(EINSUM)).toBe(countBefore + 2);
    tf.dispose([a, b, first, second]);
  });

  it('copy every output of a multi-output kernel back, and leave no data behind on either backend', () => {
    const wasm = tf.engine().backend;
    const cpu = tf.engine().findBackend('cpu');
    const kernel = tf.getKernel(RAGGED_RANGE, 'wasm')!.kernelFunc;
    const starts = tf.tensor1d([0, 5, 2], 'int32');
    const limits = tf.tensor1d([4, 8, 3], 'int32');
    const deltas = tf.tensor1d([1, 2, 1], 'int32');
    const run = () => kernel({ inputs: { starts, limits, deltas }, attrs: {}, backend: wasm }) as tf.TensorInfo[];
    tf.dispose(run().map((info) => tf.engine().makeTensorFromTensorInfo(info)));
    const wasmBefore = wasm.numDataIds();
    const cpuBefore = cpu.numDataIds();
    const outputs = run();
    expect(outputs.map((o) => [o.shape, o.dtype])).toEqual([
      [[4], 'int32'],
      [[7], 'int32'],
    ]);
    expect(Array.from(wasm.readSync(outputs[0]!.dataId) as Int32Array)).toEqual([0, 4, 6, 7]);
    expect(Array.from(wasm.readSync(outputs[1]!.dataId) as Int32Array)).toEqual([0, 1, 2, 3, 5, 7, 2]);
    for (const output of outputs) wasm.disposeData(output.dataId);
    expect(wasm.numDataIds()).toBe(wasmBefore);
    expect(cpu.numDataIds()).toBe(cpuBefore);
    tf.dispose([starts, limits, deltas]);
  });
});

describe('cpu fallbacks registered by poptfjs', () => {
  it('lets a model use a kernel the wasm backend lacks (Einsum), counted and equal to cpu', async () => {
    const { inferenceModel } = await import('poptfjs');
    const a = tf.tensor2d([
      [1, 2],
      [3, 4],
    ]);
    const b = tf.tensor2d([
      [5, 6],
      [7, 8],
    ]);
    const before = fallbackCounts().get('Einsum') ?? 0;
    const out = (await inferenceModel((x: tf.Tensor, y: tf.Tensor) => tf.einsum('ij,jk->ik', x, y))(a, b)) as tf.Tensor;
    expect(Array.from(out.dataSync())).toEqual([19, 22, 43, 50]);
    expect(fallbackCounts().get('Einsum')! - before).toBeGreaterThan(0);
  });
});
