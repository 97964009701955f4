import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectRelativelyClose, randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';

interface Case {
  name: string;
  x: number[];
  ids: number[];
  numSegments: number;
}

const CASES: Case[] = [
  { name: 'rows with repeated ids and an empty segment', x: [6, 3], ids: [0, 3, 3, 1, 0, 3], numSegments: 5 },
  { name: 'a vector', x: [6], ids: [2, 2, 0, 1, 0, 2], numSegments: 4 },
  { name: 'rank-3 data', x: [5, 2, 3], ids: [1, 0, 1, 1, 4], numSegments: 5 },
  { name: 'one id per segment, in order', x: [4, 8], ids: [0, 1, 2, 3], numSegments: 4 },
  { name: 'ids out of range (dropped)', x: [6, 3], ids: [0, -1, 3, 7, 0, 4], numSegments: 4 },
  { name: 'no ids in range', x: [3, 2], ids: [-2, 5, 9], numSegments: 3 },
];

beforeAll(useWasmTrainingBackend);

describe('wasm UnsortedSegmentSum', () => {
  for (const [i, c] of CASES.entries()) {
    it(`equals the cpu kernel: ${c.name}`, () => {
      const x = randomTensor(c.x, i);
      const segmentIds = tf.tensor1d(c.ids, 'int32');
      const attrs = { numSegments: c.numSegments };
      const actual = runKernel('UnsortedSegmentSum', { x, segmentIds }, attrs);
      expect(actual.dtype).toBe('float32');
      expectRelativelyClose(actual, runCpuKernel('UnsortedSegmentSum', { x, segmentIds }, attrs));
      tf.dispose([x, segmentIds, actual]);
    });
  }

  it('takes segment ids of any rank, as TensorFlow does', () => {
    const x = randomTensor([2, 3, 4], 7);
    const segmentIds = tf.tensor2d(
      [
        [0, 2, 2],
        [1, 0, 2],
      ],
      undefined,
      'int32',
    );
    const actual = runKernel('UnsortedSegmentSum', { x, segmentIds }, { numSegments: 3 });
    const expected = runCpuKernel('UnsortedSegmentSum', { x: x.reshape([6, 4]), segmentIds: segmentIds.reshape([6]) }, { numSegments: 3 });
    expectRelativelyClose(actual, expected);
    tf.dispose([x, segmentIds, actual]);
  });

  it('sums int32 data as int32, to the cpu kernel values', () => {
    const x = tf.tensor2d(
      [
        [1, 2],
        [3, 4],
        [5, 6],
        [7, 8],
      ],
      undefined,
      'int32',
    );
    const segmentIds = tf.tensor1d([1, 0, 1, 5], 'int32');
    const actual = runKernel('UnsortedSegmentSum', { x, segmentIds }, { numSegments: 3 });
    expect(actual.dtype).toBe('int32');
    expect(Array.from(actual.dataSync())).toEqual(Array.from(runCpuKernel('UnsortedSegmentSum', { x, segmentIds }, { numSegments: 3 }).values));
    tf.dispose([x, segmentIds, actual]);
  });

  it('gives zeros when there are no ids', () => {
    const x = tf.zeros([0, 3]);
    const segmentIds = tf.tensor1d([], 'int32');
    const actual = runKernel('UnsortedSegmentSum', { x, segmentIds }, { numSegments: 2 });
    expect(actual.shape).toEqual([2, 3]);
    expect(Array.from(actual.dataSync())).toEqual([0, 0, 0, 0, 0, 0]);
    tf.dispose([x, segmentIds, actual]);
  });

  it('leaves no data behind', () => {
    const backend = tf.engine().backend;
    const x = randomTensor([6, 3], 1);
    const inRange = tf.tensor1d([0, 1, 1, 2, 0, 2], 'int32');
    const outOfRange = tf.tensor1d([0, -1, 1, 9, 0, 2], 'int32');
    const run = () => {
      tf.dispose(runKernel('UnsortedSegmentSum', { x, segmentIds: inRange }, { numSegments: 3 }));
      tf.dispose(runKernel('UnsortedSegmentSum', { x, segmentIds: outOfRange }, { numSegments: 3 }));
    };
    run();
    const before = backend.numDataIds();
    for (let i = 0; i < 5; i++) run();
    expect(backend.numDataIds()).toBe(before);
    tf.dispose([x, inRange, outOfRange]);
  });
});
