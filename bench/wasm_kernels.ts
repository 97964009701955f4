/**
 * The poptfjs wasm training kernels on the small CNN's problems (batch 64),
 * each against what it replaces: the wasm backend's own kernel for the
 * overrides (`Conv2DBackpropInput`, `MaxPoolGrad`, `AvgPoolGrad`, `Transpose`), the cpu
 * backend's kernel for those the wasm backend lacks (`Conv2DBackpropFilter`).
 * Each case calls one kernel function directly on its backend, whatever
 * backend is active (both backends compute synchronously, so the call is
 * the whole work), and frees the result.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { replacedWasmKernels } from '../lib/backend/wasm_kernels/index.js';
import type { Benchmark } from './benchmark.js';
import type { BenchCase } from './side_by_side.js';

type Shape = number[];
type Inputs = Record<string, { readonly values: Float32Array; readonly shape: Shape }>;

/** One kernel on one problem. */
interface KernelProblem {
  readonly kernelName: string;
  readonly problem: string;
  readonly inputs: Record<string, Shape>;
  readonly attrs: tf.NamedAttrMap;
  /** The baseline: the wasm backend's own kernel, or the cpu kernel where wasm has none. */
  readonly baseline: 'wasm' | 'cpu';
}

const SAME = { strides: 1, pad: 'same', dataFormat: 'NHWC' };
const POOL = { filterSize: 2, strides: 2, pad: 'valid' };

const PROBLEMS: KernelProblem[] = [
  {
    kernelName: tf.Conv2DBackpropInput,
    problem: 'dy [64,14,14,32], filter [3,3,16,32], same',
    inputs: { dy: [64, 14, 14, 32], filter: [3, 3, 16, 32] },
    attrs: { ...SAME, inputShape: [64, 14, 14, 16] },
    baseline: 'wasm',
  },
  {
    kernelName: tf.MaxPoolGrad,
    problem: 'x [64,28,28,16], 2×2 stride 2',
    inputs: { dy: [64, 14, 14, 16], input: [64, 28, 28, 16], output: [64, 14, 14, 16] },
    attrs: POOL,
    baseline: 'wasm',
  },
  { kernelName: tf.AvgPoolGrad, problem: 'x [64,28,28,16], 2×2 stride 2', inputs: { dy: [64, 14, 14, 16], input: [64, 28, 28, 16] }, attrs: POOL, baseline: 'wasm' },
  { kernelName: tf.Transpose, problem: 'x [64,6272], perm [1,0]', inputs: { x: [64, 6272] }, attrs: { perm: [1, 0] }, baseline: 'wasm' },
  {
    kernelName: tf.Conv2DBackpropFilter,
    problem: 'x [64,28,28,1], filter [3,3,1,16], same',
    inputs: { x: [64, 28, 28, 1], dy: [64, 28, 28, 16] },
    attrs: { ...SAME, filterShape: [3, 3, 1, 16] },
    baseline: 'cpu',
  },
  {
    kernelName: tf.Conv2DBackpropFilter,
    problem: 'x [64,14,14,16], filter [3,3,16,32], same',
    inputs: { x: [64, 14, 14, 16], dy: [64, 14, 14, 32] },
    attrs: { ...SAME, filterShape: [3, 3, 16, 32] },
    baseline: 'cpu',
  },
];

/** The cpu kernels take seconds a step: few rounds. */
const CPU_ROUNDS = 3;

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

function randomInputs(shapes: Record<string, Shape>): Inputs {
  return Object.fromEntries(
    Object.entries(shapes).map(([name, shape], i) => [name, { values: tf.tidy(() => tf.randomNormal(shape, 0, 1, 'float32', i).dataSync() as Float32Array), shape }]),
  );
}

function kernelCase(name: string, backend: tf.KernelBackend, config: tf.KernelConfig, inputs: Inputs, attrs: tf.NamedAttrMap, rounds?: number): BenchCase {
  config.setupFunc?.(backend);
  const infos: tf.NamedTensorInfoMap = {};
  for (const [key, { values, shape }] of Object.entries(inputs)) {
    infos[key] = { dataId: backend.write(values, shape, 'float32'), shape, dtype: 'float32' };
  }
  return {
    name,
    ...(rounds !== undefined ? { rounds } : {}),
    step() {
      const out = config.kernelFunc({ inputs: infos, attrs, backend }) as tf.TensorInfo;
      backend.disposeData(out.dataId);
    },
  };
}

/** One benchmark per kernel problem: the kernel it replaces (the baseline), then the poptfjs wasm kernel. */
export function wasmKernelBenchmarks(rounds: number): Benchmark[] {
  return PROBLEMS.map((p) => ({
    title: `${p.kernelName}, ${p.problem}`,
    rounds,
    warmup: 1,
    async cases() {
      const wasm = await initialisedBackend('wasm');
      const inputs = randomInputs(p.inputs);
      const ours = tf.getKernel(p.kernelName, 'wasm')!;
      const baseline =
        p.baseline === 'wasm'
          ? kernelCase('tfjs wasm kernel', wasm, replacedWasmKernels().get(p.kernelName)!, inputs, p.attrs)
          : kernelCase('tfjs cpu kernel', await initialisedBackend('cpu'), tf.getKernel(p.kernelName, 'cpu')!, inputs, p.attrs, CPU_ROUNDS);
      return [baseline, kernelCase('poptfjs wasm kernel', wasm, ours, inputs, p.attrs)];
    },
    verdict: (results) => `speed-up ×${(results[0]!.medianMs / results[1]!.medianMs).toFixed(1)}`,
  }));
}
