import { describe, expect, it } from 'vitest';
import { runSideBySide, type BenchCase } from '../../bench/side_by_side.js';

/** Cases named a, b, c that record the order they step in. */
function recordingCases(order: string[]): BenchCase[] {
  return ['a', 'b', 'c'].map((name) => ({ name, step: () => void order.push(name) }));
}

describe('cases side by side', () => {
  it('step in the same order every round by default', async () => {
    const order: string[] = [];
    const results = await runSideBySide(recordingCases(order), 2, 1);
    expect(order.join('')).toBe('abcabcabc');
    expect(results.map((r) => r.samples)).toEqual([2, 2, 2]);
  });

  it('start each timed round one case later when rotated, each case timed once a round', async () => {
    const order: string[] = [];
    const results = await runSideBySide(recordingCases(order), 3, 1, true);
    expect(order.join('')).toBe('abc' + 'abc' + 'bca' + 'cab');
    expect(results.map((r) => [r.name, r.samples])).toEqual([
      ['a', 3],
      ['b', 3],
      ['c', 3],
    ]);
  });
});
