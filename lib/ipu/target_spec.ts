/**
 * The hardware a simulated IPU models. Defaults are the Mk2 GC200 IPU (as in
 * an IPU-M2000):
 *
 * - 1,472 tiles × 624 KiB of In-Processor memory (≈ 897 MiB);
 * - 250 TFLOP/s peak in fp16, 62.5 TFLOP/s in fp32, at 1.33 GHz;
 * - exchange within the IPU: 47.5 TB/s;
 * - between IPUs: 8 TB/s (the figure this project models for IPU-Links);
 * - host link: PCIe Gen4 x16, 64 GB/s;
 * - streaming memory: bandwidth not published; we assume 20 GB/s per IPU and
 *   112 GiB per IPU (an IPU-M2000 has up to 448 GiB for its four IPUs);
 * - on-tile memory bandwidth: 16 bytes per tile per cycle;
 * - a sync across IPUs costs 1,500 cycles (≈ 1.1 µs), and each kernel
 *   launch 300 cycles (assumptions of this model, documented as such).
 *
 * Every figure can be overridden (`Options.ipuTarget({...})`,
 * `DeviceManager.createIpuModelDevice({...})`).
 */
import { z } from 'zod';
import { PoptfjsError } from '../errors.js';

/** The hardware of one simulated IPU. */
export interface IpuTargetSpec {
  /** Tiles per IPU. */
  readonly tiles: number;
  /** In-Processor memory per tile, in bytes. */
  readonly memoryPerTile: number;
  /** Peak FLOP/s in fp16. */
  readonly peakFlopsFp16: number;
  /** Peak FLOP/s in fp32. */
  readonly peakFlopsFp32: number;
  /** Clock frequency in Hz (cycles are counted at this rate). */
  readonly clockHz: number;
  /** On-tile memory bandwidth per tile, in bytes per cycle. */
  readonly tileBytesPerCycle: number;
  /** Exchange bandwidth within one IPU, bytes/s. */
  readonly exchangeBandwidth: number;
  /** Bandwidth between two IPUs, bytes/s. */
  readonly ipuLinkBandwidth: number;
  /** Streaming-memory bandwidth per IPU, bytes/s. */
  readonly streamingMemoryBandwidth: number;
  /** Streaming-memory capacity per IPU, bytes. */
  readonly streamingMemoryCapacity: number;
  /** Host link bandwidth, bytes/s. */
  readonly hostLinkBandwidth: number;
  /** Cycles of one sync across IPUs. */
  readonly syncCycles: number;
  /** Cycles of overhead per kernel (launch, exchange set-up). */
  readonly kernelOverheadCycles: number;
}

const KIB = 1024;
const GIB = 1024 ** 3;

/** The Mk2 GC200. */
export const GC200: IpuTargetSpec = Object.freeze({
  tiles: 1472,
  memoryPerTile: 624 * KIB,
  peakFlopsFp16: 250e12,
  peakFlopsFp32: 62.5e12,
  clockHz: 1.33e9,
  tileBytesPerCycle: 16,
  exchangeBandwidth: 47.5e12,
  ipuLinkBandwidth: 8e12,
  streamingMemoryBandwidth: 20e9,
  streamingMemoryCapacity: 112 * GIB,
  hostLinkBandwidth: 64e9,
  syncCycles: 1500,
  kernelOverheadCycles: 300,
});

const positive = z.number().positive().finite();
const nonNegative = z.number().nonnegative().finite();

/** The schema of a (partial) spec: known keys only, each a finite number. */
export const targetSpecOverrides = z.strictObject({
  tiles: z.number().int().positive(),
  memoryPerTile: positive,
  peakFlopsFp16: positive,
  peakFlopsFp32: positive,
  clockHz: positive,
  tileBytesPerCycle: positive,
  exchangeBandwidth: positive,
  ipuLinkBandwidth: positive,
  streamingMemoryBandwidth: positive,
  streamingMemoryCapacity: nonNegative,
  hostLinkBandwidth: positive,
  syncCycles: nonNegative,
  kernelOverheadCycles: nonNegative,
}).partial();

/** A spec: the GC200 with `overrides` applied; unknown keys and bad values are errors naming them. */
export function targetSpec(overrides: Partial<IpuTargetSpec> = {}, where = 'IPU target'): IpuTargetSpec {
  const parsed = targetSpecOverrides.safeParse(overrides);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join('.') || (issue.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys?.join(', ') : '');
    throw new PoptfjsError(`${where}: ${key ? `'${key}': ` : ''}${issue.message}; expected keys ${Object.keys(GC200).join(', ')} with positive numbers`, {
      type: 'device',
    });
  }
  return Object.freeze({ ...GC200, ...parsed.data });
}

/** In-Processor memory of one IPU, in bytes. */
export function ipuMemory(spec: IpuTargetSpec): number {
  return spec.tiles * spec.memoryPerTile;
}

/** On-chip memory bandwidth of one IPU, bytes/s. */
export function tileMemoryBandwidth(spec: IpuTargetSpec): number {
  return spec.tiles * spec.tileBytesPerCycle * spec.clockHz;
}
