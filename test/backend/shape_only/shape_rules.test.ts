import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { SHAPE_RULES, VALUE_DEPENDENT_KERNELS, withShapeOnlyBackend } from '../../../lib/backend/shape_only/index.js';
import { OP_CATALOG, tensorMaker, type OpCase } from './op_catalog.js';

/** What a case gives: the shape and dtype of each output, or the error it threw. */
type Outcome = { outputs: Array<{ shape: number[]; dtype: tf.DataType }> } | { error: string };

function tensorsIn(container: tf.TensorContainer): tf.Tensor[] {
  if (container instanceof tf.Tensor) return [container];
  if (Array.isArray(container)) return container.flatMap((c) => tensorsIn(c as tf.TensorContainer));
  if (container !== null && typeof container === 'object') return Object.values(container).flatMap((c) => tensorsIn(c as tf.TensorContainer));
  return [];
}

function outcomeOf(opCase: OpCase): Outcome {
  try {
    return tf.tidy(() => ({ outputs: tensorsIn(opCase.run(tensorMaker)).map((t) => ({ shape: t.shape, dtype: t.dtype })) }));
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** Runs `fn` and returns it with the names of the kernels the engine ran meanwhile. */
function recordingKernels<T>(fn: () => T): { result: T; kernels: Set<string> } {
  const engine = tf.engine() as unknown as { runKernel: (kernelName: string, ...rest: unknown[]) => unknown };
  const original = engine.runKernel;
  const kernels = new Set<string>();
  engine.runKernel = function (this: unknown, kernelName: string, ...rest: unknown[]) {
    kernels.add(kernelName);
    return original.call(this, kernelName, ...rest);
  };
  try {
    return { result: fn(), kernels };
  } finally {
    delete (engine as Partial<typeof engine>).runKernel;
  }
}

const reference = new Map<string, Outcome>();
const shapeOnly = new Map<string, Outcome>();
let exercised = new Set<string>();
let initialBackend = '';

beforeAll(async () => {
  initialBackend = await initBackend();
  for (const backend of ['cpu', 'wasm'] as const) {
    await tf.setBackend(backend);
    for (const opCase of OP_CATALOG) {
      if ((opCase.reference ?? 'cpu') === backend) reference.set(opCase.name, outcomeOf(opCase));
    }
  }
  await tf.setBackend(initialBackend);
  exercised = await withShapeOnlyBackend(() => {
    const { kernels } = recordingKernels(() => {
      for (const opCase of OP_CATALOG) shapeOnly.set(opCase.name, outcomeOf(opCase));
    });
    return kernels;
  });
});

afterAll(async () => {
  await tf.setBackend(initialBackend);
});

describe("the shape-only backend gives the cpu backend's output shapes and dtypes", () => {
  it('for a catalog of uniquely named cases', () => {
    expect(new Set(OP_CATALOG.map((c) => c.name)).size).toBe(OP_CATALOG.length);
  });

  it.each(OP_CATALOG.map((c) => [c.name]))('%s', (name) => {
    const expected = reference.get(name)!;
    expect(expected).not.toHaveProperty('error');
    expect(shapeOnly.get(name)).toEqual(expected);
  });

  it('after exercising every kernel with a shape rule, each cpu and wasm kernel has a rule', () => {
    const cpuKernels = tf.getKernelsForBackend('cpu').map((k) => k.kernelName);
    const wasmKernels = tf.getKernelsForBackend('wasm').map((k) => k.kernelName);
    expect(cpuKernels.length).toBeGreaterThanOrEqual(172);
    const unexercised = [...SHAPE_RULES.keys()].filter((name) => !exercised.has(name) && !VALUE_DEPENDENT_KERNELS.has(name));
    expect(unexercised).toEqual([]);
    expect([...cpuKernels, ...wasmKernels].filter((name) => !SHAPE_RULES.has(name))).toEqual([]);
    // Every value-dependent kernel but the two no plan can run (Draw, ops.CPU's) is exercised with small written inputs too.
    expect([...VALUE_DEPENDENT_KERNELS.keys()].filter((name) => !exercised.has(name)).sort()).toEqual(['Draw', 'poptfjs.CpuOp']);
  });
});
