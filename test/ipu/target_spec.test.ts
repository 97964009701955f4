import { describe, expect, it } from 'vitest';
import { BOW, GC200, ipuMemory, Options, targetSpec } from 'poptfjs';

describe('IPU target spec', () => {
  it('defaults to the Mk2 GC200: 1,472 tiles × 624 KiB ≈ 897 MiB, 250.6/62.6 TFLOP/s at 1.33 GHz, 320 GB/s of IPU-Links, 5.5 GB/s to the host', () => {
    expect(ipuMemory(GC200) / 2 ** 20).toBeCloseTo(897, 0);
    expect([GC200.tiles, GC200.clockHz, GC200.hostLinkBandwidth, GC200.ipuLinkBandwidth]).toEqual([1472, 1.33e9, 5.5e9, 320e9]);
    expect(GC200.peakFlopsFp16 / 1e12).toBeCloseTo(250.6, 1);
    expect(GC200.peakFlopsFp32 / 1e12).toBeCloseTo(62.6, 1);
    expect(targetSpec()).toEqual(GC200);
  });

  it('has the Bow IPU: the same tiles at 1.85 GHz, 348.6 TFLOP/s in FP16.16', () => {
    expect(targetSpec({ ipu: 'Bow' })).toEqual(BOW);
    expect([BOW.tiles, BOW.memoryPerTile, BOW.clockHz]).toEqual([1472, GC200.memoryPerTile, 1.85e9]);
    expect(BOW.peakFlopsFp16 / 1e12).toBeCloseTo(348.6, 1);
    // 64 multiply-accumulates per tile per cycle on both.
    for (const spec of [GC200, BOW]) expect(spec.peakFlopsFp16 / (2 * spec.tiles * spec.clockHz)).toBeCloseTo(64, 9);
    expect(new Options().ipuTarget('Bow').settings.ipuTarget).toEqual({ ipu: 'Bow' });
  });

  it('takes overrides, and names a bad or unknown figure', () => {
    expect(targetSpec({ tiles: 4, memoryPerTile: 1024 }).tiles).toBe(4);
    expect(targetSpec({ ipu: 'Bow', tiles: 4 })).toMatchObject({ ipu: 'Bow', tiles: 4, clockHz: 1.85e9 });
    expect(() => targetSpec({ tiles: -1 })).toThrow(/'tiles': .*expected 'ipu' \(GC200 or Bow\) and keys/);
    expect(() => targetSpec({ warpDrive: 9 } as never)).toThrow(/warpDrive/);
    expect(() => targetSpec({ ipu: 'Mk3' } as never)).toThrow(/'ipu'/);
    expect(() => new Options().ipuTarget('Colossus' as never)).toThrow(/Options.ipuTarget: .*GC200 or Bow/);
  });
});
