/**
 * How poplibs shares an IPU's tiles among the convolutions of a parallel
 * multi-convolution (lib/poplin/ConvPlan.cpp, `getParallelMultiPlan`), on the
 * simulated planner:
 *
 * 1. every convolution but the largest (by FLOPs) keeps `perConvReservedTiles`
 *    tiles (max(1, tiles / convolutions) when the IPU has fewer); the largest
 *    is planned for speed on the rest;
 * 2. it is planned again on the fewest tiles whose time is within the cycle
 *    back-off of that fastest plan: `1 + (convolutions - 1) · cycleBackOff`
 *    times it (poplibs' `cycleBackOff`, 0.1 by default), so that the others
 *    get the tiles it gives up; its time is the reference;
 * 3. the others, smallest first, up to but not including the second largest,
 *    each take the fewest tiles of those left (less the tiles still reserved)
 *    on which they run within the reference, or all of them when none does
 *    (the reference then grows to their time);
 * 4. the second largest takes every tile left.
 *
 * Convolutions run on tiles that follow one another, so no tile serves two.
 * When a step has no tile to give, there is no parallel plan (poplibs' "Not
 * enough tiles for multi-conv"), and the group is planned serially.
 */

/** The tiles of each convolution of a parallel group, in group order; undefined when the tiles cannot give every convolution one. */
export function multiConvTiles(
  flops: readonly number[],
  cyclesOn: (convolution: number, tiles: number) => number,
  tiles: number,
  perConvReservedTiles: number,
  cycleBackOff: number,
): number[] | undefined {
  const count = flops.length;
  const bySize = flops.map((_, i) => i).sort((a, b) => flops[a]! - flops[b]! || a - b);
  const reservedEach = tiles < count * perConvReservedTiles ? Math.max(1, Math.floor(tiles / count)) : perConvReservedTiles;
  let reserved = (count - 1) * reservedEach;
  const backOff = 1 + (count - 1) * cycleBackOff;
  const given = new Array<number>(count).fill(0);

  // The fewest tiles, at most `available`, on which convolution `c` runs within `limit` cycles (its time is non-increasing in its tiles).
  const fewestWithin = (c: number, available: number, limit: number): number | undefined => {
    if (cyclesOn(c, available) > limit) return undefined;
    let low = 1;
    let high = available;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      if (cyclesOn(c, middle) <= limit) high = middle;
      else low = middle + 1;
    }
    return low;
  };

  const largest = bySize[count - 1]!;
  const referenceTiles = tiles - reserved;
  if (referenceTiles <= 0) return undefined;
  given[largest] = fewestWithin(largest, referenceTiles, cyclesOn(largest, referenceTiles) * backOff)!;
  let reference = cyclesOn(largest, given[largest]!);
  let start = given[largest]!;
  reserved -= reservedEach;
  for (const c of bySize.slice(0, Math.max(0, count - 2))) {
    const available = tiles - start - reserved;
    if (available <= 0) return undefined;
    const fitting = fewestWithin(c, available, reference);
    given[c] = fitting ?? available;
    if (fitting === undefined) reference = Math.max(reference, cyclesOn(c, available));
    start += given[c]!;
    reserved -= reservedEach;
  }
  if (count > 1) {
    const last = bySize[count - 2]!;
    const available = tiles - start;
    if (available <= 0) return undefined;
    given[last] = available;
  }
  return given;
}
