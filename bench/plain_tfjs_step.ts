/**
 * The plain tfjs training step the poptfjs cases are measured against:
 * `optimizer.minimize` of the categorical cross-entropy on one batch, on a
 * given backend, with the model and the data created on that backend.
 */
import { tf } from 'poptfjs';
import { replacedWasmKernels, WASM_KERNEL_OVERRIDES } from '../lib/backend/wasm_kernels/index.js';
import type { BenchCase } from './side_by_side.js';

/** What a training benchmark trains: a model and one batch, made on the active backend. */
export interface TrainingProblem {
  /** A new model, with seeded weights (the same at every call). */
  model(): tf.LayersModel;
  /** The batch: inputs `x` and one-hot targets `y`, seeded. */
  batch(): { readonly x: tf.Tensor; readonly y: tf.Tensor };
}

/**
 * Runs `step` with `backend` active, so cases on several backends can take
 * turns: switches to it only when another backend is active (a switch re-runs
 * the setup of every kernel of the backend, which a step on the backend
 * already active does not pay) and back afterwards.
 */
export async function onBackend(backend: string, step: () => unknown): Promise<void> {
  const active = tf.getBackend();
  if (active === backend) {
    await step();
    return;
  }
  await tf.setBackend(backend);
  try {
    await step();
  } finally {
    await tf.setBackend(active);
  }
}

/** The wasm backend's own kernels whose setup has run, by kernel name. */
const ownKernelsSetUp = new Set<string>();

/**
 * Runs `step` with the wasm backend's own kernels registered in place of
 * poptfjs's overrides (`WASM_KERNEL_OVERRIDES`: its matrix products,
 * convolution input gradients, poolings and copies), so that plain tfjs is
 * measured as tfjs ships; the kernels the backend lacks, which poptfjs adds
 * (without them tfjs cannot train a convolution on wasm), stay. The
 * overrides are registered again afterwards.
 */
function withOwnWasmKernels(step: () => void): void {
  const own = replacedWasmKernels();
  const swap = (configs: readonly tf.KernelConfig[]) => {
    for (const config of configs) {
      tf.unregisterKernel(config.kernelName, config.backendName);
      tf.registerKernel(config);
    }
  };
  const originals = WASM_KERNEL_OVERRIDES.map((c) => own.get(c.kernelName)).filter((c) => c !== undefined);
  for (const config of originals) {
    if (ownKernelsSetUp.has(config.kernelName)) continue;
    config.setupFunc?.(tf.backend());
    ownKernelsSetUp.add(config.kernelName);
  }
  swap(originals);
  try {
    step();
  } finally {
    swap(WASM_KERNEL_OVERRIDES.filter((c) => own.has(c.kernelName)));
  }
}

/**
 * A case stepping plain tfjs SGD (lr 0.01) on `backend` (see
 * {@link onBackend}; on wasm, with the backend's own kernels, see
 * {@link withOwnWasmKernels}), at most `rounds` timed rounds.
 */
export async function plainTfjsCase(problem: TrainingProblem, backend: string, rounds?: number): Promise<BenchCase> {
  const active = tf.getBackend();
  await tf.setBackend(backend);
  const model = problem.model();
  const { x, y } = problem.batch();
  const optimizer = tf.train.sgd(0.01);
  await tf.setBackend(active);
  return {
    name: `tfjs ${backend} (optimizer.minimize)`,
    ...(rounds !== undefined ? { rounds } : {}),
    step: () =>
      onBackend(backend, () => {
        const step = () => {
          const loss = optimizer.minimize(() => tf.mean(tf.metrics.categoricalCrossentropy(y, model.apply(x, { training: true }) as tf.Tensor)) as tf.Scalar, true)!;
          loss.dataSync();
          loss.dispose();
        };
        if (backend === 'wasm') withOwnWasmKernels(step);
        else step();
      }),
  };
}
