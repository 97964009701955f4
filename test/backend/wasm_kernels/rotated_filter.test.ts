/**
 * The filter turned by 180° that the wasm input-gradient kernels correlate
 * with, against tfjs's `reverse` of both spatial axes.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { KernelCallScope } from '../../../lib/backend/wasm_kernels/kernel_call_scope.js';
import { rotatedFilter } from '../../../lib/backend/wasm_kernels/rotated_filter.js';
import { randomTensor, useWasmTrainingBackend } from './kernel_reference.js';

describe('rotatedFilter', () => {
  beforeAll(useWasmTrainingBackend);

  for (const shape of [
    [3, 3, 16, 32],
    [2, 3, 2, 5],
    [5, 1, 1, 8],
    [1, 1, 4, 2],
    [3, 3, 7, 1],
  ]) {
    it(`turns a [${shape}] filter by 180° in its spatial axes, element for element, and frees what it made`, () => {
      const filter = randomTensor(shape, shape.length + shape[0]!);
      const backend = tf.backend();
      const before = backend.numDataIds();
      const info = KernelCallScope.run('wasm', backend, (k) => rotatedFilter(k, filter));
      const turned = tf.engine().makeTensorFromTensorInfo(info);
      expect(backend.numDataIds()).toBe(before + 1);
      expect(turned.shape).toEqual(shape);
      expect(turned.dataSync()).toEqual(tf.reverse(filter, [0, 1]).dataSync());
      tf.dispose([filter, turned]);
    });
  }
});
