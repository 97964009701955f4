import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PoptfjsError } from '../../../lib/common/errors.js';
import { currentBackend, initBackend } from '../../../lib/backend/backend_selection.js';
import {
  registerShapeOnlyBackend,
  SHAPE_ONLY_BACKEND,
  SHAPE_ONLY_MAX_KEPT_ELEMENTS,
  SHAPE_RULES,
  type ShapeOnlyBackend,
  ShapeOnlyError,
  VALUE_DEPENDENT_KERNELS,
  withShapeOnlyBackend,
} from '../../../lib/backend/shape_only/index.js';

function shapeOnlyBackend(): ShapeOnlyBackend {
  return tf.engine().findBackend(SHAPE_ONLY_BACKEND) as ShapeOnlyBackend;
}

/** The names of the kernels registered for any backend other than the shape-only one. */
function kernelsOfOtherBackends(): Set<string> {
  const registry = (globalThis as unknown as { _tfGlobals: Map<string, Map<string, tf.KernelConfig>> })._tfGlobals.get('kernelRegistry')!;
  return new Set([...registry.values()].filter((k) => k.backendName !== SHAPE_ONLY_BACKEND).map((k) => k.kernelName));
}

let initialBackend = '';

beforeAll(async () => {
  initialBackend = await initBackend();
});

describe('registration', () => {
  it('registers the backend under its name, below every other backend, without changing the backend chosen', async () => {
    const factories = (tf.engine() as unknown as { registryFactory: Record<string, { priority: number }> }).registryFactory;
    expect(factories[SHAPE_ONLY_BACKEND]!.priority).toBeLessThan(
      Math.min(
        ...Object.entries(factories)
          .filter(([n]) => n !== SHAPE_ONLY_BACKEND)
          .map(([, f]) => f.priority),
      ),
    );
    const sorted = (tf.engine() as unknown as { getSortedBackends(): string[] }).getSortedBackends();
    expect(sorted[sorted.length - 1]).toBe(SHAPE_ONLY_BACKEND);
    expect(sorted[0]).not.toBe(SHAPE_ONLY_BACKEND);
    registerShapeOnlyBackend();
    expect(await initBackend()).toBe(initialBackend);
    expect(currentBackend()).toBe(initialBackend);
    expect(['tensorflow', 'wasm', 'cpu']).toContain(initialBackend);
  });

  it('has a kernel for every kernel name of every backend, and a rule for every cpu and wasm kernel', () => {
    const shapeOnlyKernels = new Set(tf.getKernelsForBackend(SHAPE_ONLY_BACKEND).map((k) => k.kernelName));
    expect([...kernelsOfOtherBackends()].filter((name) => !shapeOnlyKernels.has(name))).toEqual([]);
    for (const backend of ['cpu', 'wasm']) {
      expect(
        tf
          .getKernelsForBackend(backend)
          .map((k) => k.kernelName)
          .filter((name) => !SHAPE_RULES.has(name)),
      ).toEqual([]);
    }
  });

  it('answers a kernel registered later for another backend, without a rule, with an error naming it', async () => {
    const kernelName = 'PoptfjsShapeOnlyTestKernel';
    tf.registerKernel({ kernelName, backendName: 'cpu', kernelFunc: ({ inputs }) => inputs.x! });
    try {
      await withShapeOnlyBackend(() => {
        const run = () => tf.engine().runKernel(kernelName, { x: tf.ones([2]) }, {});
        expect(run).toThrow(ShapeOnlyError);
        expect(run).toThrow(/no shape rule for kernel 'PoptfjsShapeOnlyTestKernel'/);
        expect(run).not.toThrow(/not registered/);
      });
    } finally {
      tf.unregisterKernel(kernelName, 'cpu');
      tf.unregisterKernel(kernelName, SHAPE_ONLY_BACKEND);
    }
  });
});

describe('tensors of the shape-only backend', () => {
  it('keep the values written from the host for small tensors only, and count bytes without holding them', async () => {
    await withShapeOnlyBackend(() => {
      const backend = shapeOnlyBackend();
      const before = backend.memory();
      const small = tf.tensor1d([1, 2, 3]);
      const atLimit = tf.zeros([SHAPE_ONLY_MAX_KEPT_ELEMENTS], 'int32');
      const large = tf.tensor1d(Array.from({ length: SHAPE_ONLY_MAX_KEPT_ELEMENTS + 1 }, (_, i) => i));
      // A larger fill (tfjs's gradient functions write tensors of ones) keeps its one value and reads back whole.
      const fill = tf.ones([SHAPE_ONLY_MAX_KEPT_ELEMENTS + 1]);
      expect(fill.dataSync()).toEqual(new Float32Array(SHAPE_ONLY_MAX_KEPT_ELEMENTS + 1).fill(1));
      expect(Array.from(small.dataSync())).toEqual([1, 2, 3]);
      expect(atLimit.dataSync()).toHaveLength(SHAPE_ONLY_MAX_KEPT_ELEMENTS);
      expect(tf.scalar(7, 'int32').arraySync()).toBe(7);
      expect(tf.tensor(['a', 'bc']).arraySync()).toEqual(['a', 'bc']);
      expect(() => large.dataSync()).toThrow(
        new RegExp(
          `a tensor of shape \\[${SHAPE_ONLY_MAX_KEPT_ELEMENTS + 1}\\] \\(float32\\) written from the host: the shape-only backend keeps the values of tensors of at most ${SHAPE_ONLY_MAX_KEPT_ELEMENTS} elements`,
        ),
      );
      const after = backend.memory();
      expect(after.numBytesDescribed - before.numBytesDescribed).toBe(3 * 4 + SHAPE_ONLY_MAX_KEPT_ELEMENTS * 4 + 2 * (SHAPE_ONLY_MAX_KEPT_ELEMENTS + 1) * 4 + 4 + 3);
      expect(after.numBytesOnHost - before.numBytesOnHost).toBe(3 * 4 + SHAPE_ONLY_MAX_KEPT_ELEMENTS * 4 + 4 + 3);
      const big = tf.randomNormal([1000, 1000]);
      expect(backend.memory().numBytesOnHost).toBe(after.numBytesOnHost);
      expect(backend.memory().numBytesDescribed - after.numBytesDescribed).toBe(4e6);
      tf.dispose([small, atLimit, large, fill, big]);
    });
  });

  it('made by kernels have no values: reading them names the shape and the kernel, and says what to do', async () => {
    await withShapeOnlyBackend(async () => {
      const product = tf.matMul(tf.ones([4, 5]), tf.ones([5, 6]));
      const message =
        /poptfjs is planning with shapes only, and the model read the values of a tensor of shape \[4,6\] \(float32\) made by kernel 'BatchMatMul'.*compute with tensor ops.*or plan with real data/;
      expect(() => product.dataSync()).toThrow(message);
      expect(() => product.arraySync()).toThrow(message);
      await expect(product.data()).rejects.toThrow(message);
      await expect(product.array()).rejects.toThrow(message);
      const error = (() => {
        try {
          product.sum().dataSync();
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ShapeOnlyError);
      expect(error).toBeInstanceOf(PoptfjsError);
      expect((error as ShapeOnlyError).location).toBe('Sum');
      expect(() => tf.randomUniform([2]).add(1).dataSync()).toThrow(/made by kernel 'Add'/);
    });
  });

  it('are released when disposed: data ids and engine tensors return to where they were', async () => {
    await withShapeOnlyBackend(() => {
      const backend = shapeOnlyBackend();
      const dataIds = backend.numDataIds();
      const tensors = tf.memory().numTensors;
      const kept = tf.tidy(() => {
        const x = tf.randomNormal([64, 32]);
        const w = tf.variable(tf.zeros([32, 16]));
        const y = tf.relu(tf.matMul(x, w)).reshape([-1]).clone();
        w.dispose();
        return y;
      });
      expect(backend.numDataIds()).toBe(dataIds + 1);
      expect(backend.refCount(kept.dataId)).toBe(1);
      kept.dispose();
      expect(backend.numDataIds()).toBe(dataIds);
      expect(tf.memory().numTensors).toBe(tensors);
    });
  });

  it('share data ids with variables made from them, as on other backends', async () => {
    await withShapeOnlyBackend(() => {
      const backend = shapeOnlyBackend();
      const initial = tf.zeros([3, 3]);
      const variable = tf.variable(initial);
      expect(backend.refCount(initial.dataId)).toBe(2);
      initial.dispose();
      expect(backend.refCount(variable.dataId)).toBe(1);
      variable.assign(tf.ones([3, 3]).mul(2));
      expect(variable.shape).toEqual([3, 3]);
      variable.dispose();
    });
  });

  it('stay on the shape-only backend afterwards: shapes work, values do not, also on another backend', async () => {
    const outside = await withShapeOnlyBackend(() => tf.conv2d(tf.ones([1, 8, 8, 3]) as tf.Tensor4D, tf.ones([3, 3, 3, 4]) as tf.Tensor4D, 2, 'same'));
    expect(tf.getBackend()).toBe(initialBackend);
    expect(outside.shape).toEqual([1, 4, 4, 4]);
    expect(() => outside.dataSync()).toThrow(/made by kernel 'Conv2D'/);
    expect(() => outside.add(1)).toThrow(/made by kernel 'Conv2D'/);
    outside.dispose();
  });

  it('can be made from tensors of the previous backend, whose small values value-dependent kernels use', async () => {
    const weights = tf.ones([300, 200]);
    const ids = tf.tensor1d([3, 1, 3, 2], 'int32');
    const { product, unique } = await withShapeOnlyBackend(() => {
      const product = tf.matMul(tf.zeros([7, 300]), weights);
      const { values } = tf.unique(ids);
      return { product: product.shape, unique: values.shape };
    });
    expect(product).toEqual([7, 200]);
    expect(unique).toEqual([3]);
    expect(weights.dataSync()[0]).toBe(1);
    tf.dispose([weights, ids]);
  });

  it('time kernels and report float32 precision', async () => {
    await withShapeOnlyBackend(async () => {
      const timing = await tf.time(() => tf.matMul(tf.ones([8, 8]), tf.ones([8, 8])));
      expect(timing.kernelMs).toBeGreaterThanOrEqual(0);
      expect(tf.backend().floatPrecision()).toBe(32);
      expect(tf.backend().epsilon()).toBe(1e-7);
      expect(() => tf.backend().readToGPU(tf.ones([2]).dataId)).toThrow(ShapeOnlyError);
    });
  });
});

describe('value-dependent kernels', () => {
  it('say which kernel cannot be planned, why, and which input lacks values', async () => {
    await withShapeOnlyBackend(() => {
      const computed = tf.randomUniform([2000], 0, 10, 'int32').add(tf.scalar(1, 'int32'));
      expect(() => tf.unique(computed)).toThrow(ShapeOnlyError);
      expect(() => tf.unique(computed)).toThrow(
        /cannot plan kernel 'Unique': the number of unique elements depends on the values of its input, and its input 'x' \(shape \[2000\], int32\) has no values/,
      );
      const boxes = tf.randomUniform([100, 4]).clone();
      expect(() => tf.image.nonMaxSuppression(boxes as tf.Tensor2D, tf.randomUniform([100]) as tf.Tensor1D, 10)).toThrow(/kernel 'NonMaxSuppressionV3'.*input 'boxes'/);
      expect(() => tf.raggedRange(computed.slice(0, 2), tf.tensor1d([4, 5], 'int32'), tf.tensor1d([1, 1], 'int32'))).toThrow(/kernel 'RaggedRange'/);
      expect(() => tf.engine().runKernel('Draw', { image: tf.zeros([2, 2, 3]) }, {})).toThrow(/cannot plan kernel 'Draw': it draws the values of its image on a canvas/);
    });
  });

  it('are planned from the few values they need: segment ids for a large table, a padded box count', async () => {
    const { segments, padded } = await withShapeOnlyBackend(() => {
      const table = tf.randomNormal([50000, 64]);
      const segments = tf.sparse.sparseSegmentSum(table, tf.tensor1d([7, 900, 42], 'int32'), tf.tensor1d([0, 0, 3], 'int32'));
      const [selected, valid] = Object.values(
        tf.image.nonMaxSuppressionPadded(tf.randomUniform([5000, 4]) as tf.Tensor2D, tf.randomUniform([5000]) as tf.Tensor1D, 20, 0.5, 0, true),
      ) as tf.Tensor[];
      return { segments: segments.shape, padded: [selected!.shape, valid!.shape] };
    });
    expect(segments).toEqual([4, 64]);
    expect(padded).toEqual([[20], []]);
  });

  it('are documented with their reasons', () => {
    expect([...VALUE_DEPENDENT_KERNELS.keys()].sort()).toEqual(
      [
        'Draw',
        'poptfjs.CpuOp',
        'NonMaxSuppressionV3',
        'NonMaxSuppressionV4',
        'NonMaxSuppressionV5',
        'RaggedGather',
        'RaggedRange',
        'RaggedTensorToTensor',
        'SparseFillEmptyRows',
        'SparseSegmentMean',
        'SparseSegmentSum',
        'StringNGrams',
        'StringSplit',
        'Unique',
      ].sort(),
    );
    for (const reason of VALUE_DEPENDENT_KERNELS.values()) expect(reason.length).toBeGreaterThan(10);
  });
});
