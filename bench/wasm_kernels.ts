/**
 * The wasm training kernels against the tfjs cpu backend's kernels, on
 * CNN-sized problems: `Conv2DBackpropFilter` of the two convolutions of a
 * small MNIST CNN (batch 64). Each case calls one kernel directly on its
 * backend, whatever backend is active, and reads the result back.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { conv2DBackpropFilterConfig } from '../lib/backend/wasm_kernels/conv2d_backprop_filter.js';
import type { BenchCase } from './side_by_side.js';

/** One kernel benchmark: the cpu kernel (the baseline) and the wasm kernel, on one problem. */
export interface KernelBenchmark {
  /** The kernel and the problem, as a table title. */
  readonly title: string;
  /** The cpu kernel's case (the baseline), then the wasm kernel's. */
  readonly cases: BenchCase[];
  /** Timed rounds: few, since the cpu kernel takes seconds a step. */
  readonly rounds: number;
  /** Untimed rounds before them. */
  readonly warmup: number;
}

interface Problem {
  readonly x: [number, number, number, number];
  readonly filter: [number, number, number, number];
}

const PROBLEMS: Problem[] = [
  { x: [64, 28, 28, 1], filter: [3, 3, 1, 16] },
  { x: [64, 14, 14, 16], filter: [3, 3, 16, 32] },
];

/** The backend registered as `name`, initialised without changing the active backend. */
async function initialisedBackend(name: string): Promise<tf.KernelBackend> {
  await tf.ready();
  const active = tf.getBackend();
  if (tf.engine().findBackend(name) === null) {
    await tf.setBackend(name);
    await tf.setBackend(active);
  }
  return tf.engine().findBackend(name);
}

function randomValues(shape: readonly number[], seed: number): Float32Array {
  return tf.tidy(() => tf.randomNormal([...shape], 0, 1, 'float32', seed).dataSync() as Float32Array);
}

function kernelCase(
  name: string,
  backend: tf.KernelBackend,
  kernelFunc: tf.KernelFunc,
  inputs: Record<string, { values: Float32Array; shape: number[] }>,
  attrs: tf.NamedAttrMap,
): BenchCase {
  const infos: tf.NamedTensorInfoMap = {};
  for (const [key, { values, shape }] of Object.entries(inputs)) {
    infos[key] = { dataId: backend.write(values, shape, 'float32'), shape, dtype: 'float32' };
  }
  return {
    name,
    step() {
      const out = kernelFunc({ inputs: infos, attrs, backend }) as tf.TensorInfo;
      backend.readSync(out.dataId);
      backend.disposeData(out.dataId);
    },
  };
}

/** The benchmarks of the wasm `Conv2DBackpropFilter` against the cpu one, one per problem, cpu first. */
export async function wasmKernelCases(): Promise<KernelBenchmark[]> {
  const cpu = await initialisedBackend('cpu');
  const wasm = await initialisedBackend('wasm');
  const cpuKernel = tf.getKernel(tf.Conv2DBackpropFilter, 'cpu')!.kernelFunc;
  return PROBLEMS.map(({ x, filter }, i) => {
    const dyShape = [x[0], x[1], x[2], filter[3]];
    const inputs = { x: { values: randomValues(x, 2 * i), shape: [...x] }, dy: { values: randomValues(dyShape, 2 * i + 1), shape: dyShape } };
    const attrs = { strides: 1, pad: 'same', dataFormat: 'NHWC', filterShape: [...filter] };
    return {
      title: `Conv2DBackpropFilter, x [${x}], filter [${filter}], 'same'`,
      cases: [
        kernelCase('tfjs cpu kernel', cpu, cpuKernel, inputs, attrs),
        kernelCase('poptfjs wasm kernel', wasm, conv2DBackpropFilterConfig.kernelFunc, inputs, attrs),
      ],
      rounds: 3,
      warmup: 1,
    };
  });
}
