import { describe, expect, it } from 'vitest';
import { GC200, ipuMemory, targetSpec } from 'poptfjs';

describe('IPU target spec', () => {
  it('defaults to the Mk2 GC200: 1,472 tiles × 624 KiB ≈ 897 MiB, 250/62.5 TFLOP/s, 64 GB/s to the host', () => {
    expect(ipuMemory(GC200) / 2 ** 20).toBeCloseTo(897, 0);
    expect([GC200.tiles, GC200.peakFlopsFp16, GC200.peakFlopsFp32, GC200.hostLinkBandwidth, GC200.ipuLinkBandwidth]).toEqual([1472, 250e12, 62.5e12, 64e9, 8e12]);
  });

  it('takes overrides, and names a bad or unknown figure', () => {
    expect(targetSpec({ tiles: 4, memoryPerTile: 1024 }).tiles).toBe(4);
    expect(() => targetSpec({ tiles: -1 })).toThrow(/'tiles': .*expected keys/);
    expect(() => targetSpec({ warpDrive: 9 } as never)).toThrow(/warpDrive/);
  });
});
