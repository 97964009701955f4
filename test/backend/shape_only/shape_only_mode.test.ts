import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { SHAPE_ONLY_BACKEND, ShapeOnlyError, withShapeOnlyBackend } from '../../../lib/backend/shape_only/index.js';
import * as poptfjs from 'poptfjs';

let initialBackend = '';

beforeAll(async () => {
  initialBackend = await initBackend();
});

describe('withShapeOnlyBackend', () => {
  it("is exported by poptfjs with the backend's name and error", () => {
    expect(poptfjs.withShapeOnlyBackend).toBe(withShapeOnlyBackend);
    expect(poptfjs.SHAPE_ONLY_BACKEND).toBe(SHAPE_ONLY_BACKEND);
    expect(poptfjs.ShapeOnlyError).toBe(ShapeOnlyError);
    expect(new poptfjs.ShapeOnlyError('x', 'Unique')).toBeInstanceOf(poptfjs.Error);
  });

  it('runs fn on the shape-only backend, returns its result and restores the previous backend', async () => {
    const seen = await withShapeOnlyBackend(() => tf.getBackend());
    expect(seen).toBe(SHAPE_ONLY_BACKEND);
    expect(tf.getBackend()).toBe(initialBackend);
    expect(await withShapeOnlyBackend(async () => 42)).toBe(42);
  });

  it('restores the previous backend when fn throws, synchronously or not, and rethrows', async () => {
    await expect(withShapeOnlyBackend(() => tf.randomNormal([2000]).dataSync())).rejects.toThrow(ShapeOnlyError);
    expect(tf.getBackend()).toBe(initialBackend);
    await expect(
      withShapeOnlyBackend(async () => {
        await Promise.resolve();
        throw new Error('model failed');
      }),
    ).rejects.toThrow('model failed');
    expect(tf.getBackend()).toBe(initialBackend);
  });

  it('restores whichever backend was in use before', async () => {
    await tf.setBackend('cpu');
    try {
      await withShapeOnlyBackend(() => undefined);
      expect(tf.getBackend()).toBe('cpu');
    } finally {
      await tf.setBackend(initialBackend);
    }
  });

  it('nests: the inner call stays on the shape-only backend and only the outer one restores', async () => {
    const backends = await withShapeOnlyBackend(async () => {
      const inner = await withShapeOnlyBackend(() => tf.getBackend());
      const afterInner = tf.getBackend();
      await expect(
        withShapeOnlyBackend(() => {
          throw new Error('inner');
        }),
      ).rejects.toThrow('inner');
      return [inner, afterInner, tf.getBackend()];
    });
    expect(backends).toEqual([SHAPE_ONLY_BACKEND, SHAPE_ONLY_BACKEND, SHAPE_ONLY_BACKEND]);
    expect(tf.getBackend()).toBe(initialBackend);
  });

  it('overlaps: concurrent calls all run on the shape-only backend until the last ends', async () => {
    const seen: string[] = [];
    const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));
    const task = (steps: number) =>
      withShapeOnlyBackend(async () => {
        for (let i = 0; i < steps; i++) {
          seen.push(tf.getBackend());
          await pause();
        }
      });
    await Promise.all([task(2), task(4), task(1)]);
    expect(new Set(seen)).toEqual(new Set([SHAPE_ONLY_BACKEND]));
    expect(tf.getBackend()).toBe(initialBackend);
    expect(await withShapeOnlyBackend(() => tf.getBackend())).toBe(SHAPE_ONLY_BACKEND);
    expect(tf.getBackend()).toBe(initialBackend);
  });
});
