import { describe, expect, it } from 'vitest';
import { broadcastShape, conv2dShape, matMulShape, sameShape, swapLastTwoAxes, transposeShape } from '../../../lib/ir/patterns/kernel_output_shapes.js';

describe('kernel output shapes', () => {
  it('compares shapes', () => {
    expect(sameShape([2, 3], [2, 3])).toBe(true);
    expect(sameShape([2, 3], [3, 2])).toBe(false);
    expect(sameShape([], [1])).toBe(false);
  });

  it('transposes and swaps the last two axes', () => {
    expect(swapLastTwoAxes(2)).toEqual([1, 0]);
    expect(swapLastTwoAxes(4)).toEqual([0, 1, 3, 2]);
    expect(transposeShape([2, 3, 4], [2, 0, 1])).toEqual([4, 2, 3]);
  });

  it('broadcasts like numpy and refuses shapes that do not', () => {
    expect(broadcastShape([4, 1, 3], [5, 1])).toEqual([4, 5, 3]);
    expect(() => broadcastShape([2, 3], [4])).toThrow();
  });

  it('multiplies batched matrices with transposes and broadcast batch dimensions', () => {
    expect(matMulShape([64, 784], [64, 512], true, false)).toEqual([784, 512]);
    expect(matMulShape([2, 1, 3, 5], [4, 4, 5], false, true)).toEqual([2, 4, 3, 4]);
  });

  it('convolves with strides, padding, data format and depth multipliers', () => {
    expect(conv2dShape([1, 5, 5, 2], [3, 3, 2, 4], { strides: 2, pad: 'same', dataFormat: 'NHWC', dilations: [1, 1] }, false)).toEqual([1, 3, 3, 4]);
    expect(conv2dShape([1, 2, 5, 5], [3, 3, 2, 4], { strides: 1, pad: 'valid', dataFormat: 'NCHW' }, false)).toEqual([1, 4, 3, 3]);
    expect(conv2dShape([1, 6, 6, 2], [3, 3, 2, 2], { strides: 1, pad: 'valid', dilations: 1 }, true)).toEqual([1, 4, 4, 4]);
  });
});
