/**
 * The hardware a simulated IPU models: the Mk2 GC200 (as in an IPU-M2000,
 * IPU-POD16) by default, or the Bow IPU (Bow-2000, Bow Pod16).
 *
 * Sources of each figure:
 * - 1,472 tiles with six worker threads each: Graphcore's GC200 launch and
 *   Bow-2000 datasheet ("1,472 independent IPU-Core tiles");
 * - 624 KiB of In-Processor memory per tile (897 MiB per IPU): Graphcore
 *   gives "900MB" per IPU (MLPerf v1.1/v2.0 system descriptions); 624 KiB per
 *   tile is the largest whole number of KiB within it;
 * - clock 1.33 GHz (GC200) and 1.85 GHz (Bow): the MLPerf training v1.1 and
 *   v2.0 system descriptions of Graphcore's IPU-POD16 and Bow Pod16
 *   (`accelerator_frequency`);
 * - peak FP16.16: 64 multiply-accumulates per tile per cycle, 250.6 TFLOP/s
 *   per GC200 and 348.6 per Bow IPU, which Graphcore rounds to "1 petaFLOPS
 *   FP16.16" per IPU-M2000 and "1.4 petaFLOPS" per Bow-2000; FP32 at a
 *   quarter of that (the Bow Pod256 datasheet: 89.23 PFLOPS FP16.16, 22.31
 *   FP32);
 * - IPU-Links: ten links, 320 GB/s per IPU (the GC200 datasheet figure);
 *   the Bow IPU has the same links;
 * - host I/O: 5.5 GB/s from an IPU back to the host through the IPU-Gateway
 *   (Graphcore's EfficientDet example, graphcore/examples
 *   vision/efficientdet/tensorflow2/README.md);
 * - streaming memory: the IPU reaches it through the IPU-Gateway over the
 *   equivalent of PCIe Gen4 x8, 16 GB/s per direction; capacity "up to 256GB"
 *   per Bow-2000 (datasheet) and "up to 260 GB" per IPU-M2000 (IPU
 *   Programmer's Guide), a quarter of it per IPU;
 * - syncs across IPUs: 15 ns per hop, one hop within a card plus one per card
 *   pair, there and back (the IPU model poplibs' tests use,
 *   lib/poplibs_test/Util.cpp).
 *
 * The tile-level figures (exchange bytes per cycle, AMP and vector rates,
 * vertex overheads) are in the cost model (kernel_cycles.ts,
 * matmul_plan.ts). Every figure here can be overridden
 * (`Options.ipuTarget({...})`, `DeviceManager.createIpuModelDevice({...})`).
 */
import { z } from 'zod';
import { PoptfjsError } from '../common/errors.js';

/** The IPUs poptfjs models. */
export const IPU_TARGETS = ['GC200', 'Bow'] as const;
/** The name of a target IPU. */
export type IpuTargetName = (typeof IPU_TARGETS)[number];

/** The hardware of one simulated IPU. */
export interface IpuTargetSpec {
  /** Which IPU this is (its figures may be overridden). */
  readonly ipu: IpuTargetName;
  /** Tiles per IPU. */
  readonly tiles: number;
  /** In-Processor memory per tile, in bytes. */
  readonly memoryPerTile: number;
  /** Peak FLOP/s in fp16 with fp16 accumulation (FP16.16); with fp32 accumulation the AMP runs at half this rate. */
  readonly peakFlopsFp16: number;
  /** Peak FLOP/s in fp32. */
  readonly peakFlopsFp32: number;
  /** Tile clock frequency in Hz (cycles are counted at this rate). */
  readonly clockHz: number;
  /** IPU-Link bandwidth of one IPU over all its links, bytes/s. */
  readonly ipuLinkBandwidth: number;
  /** IPU-Links per IPU. */
  readonly ipuLinks: number;
  /** Streaming-memory bandwidth per IPU, bytes/s. */
  readonly streamingMemoryBandwidth: number;
  /** Streaming-memory capacity per IPU, bytes. */
  readonly streamingMemoryCapacity: number;
  /** Host I/O bandwidth per IPU, bytes/s. */
  readonly hostLinkBandwidth: number;
  /** Latency of one hop of a sync across IPUs, seconds. */
  readonly syncHopLatency: number;
}

const KIB = 1024;
/** FLOPs per tile per cycle of the AMP in FP16.16: 64 multiply-accumulates. */
const FP16_FLOPS_PER_TILE_CYCLE = 128;

/** The Mk2 GC200. */
export const GC200: IpuTargetSpec = Object.freeze({
  ipu: 'GC200',
  tiles: 1472,
  memoryPerTile: 624 * KIB,
  peakFlopsFp16: FP16_FLOPS_PER_TILE_CYCLE * 1472 * 1.33e9,
  peakFlopsFp32: (FP16_FLOPS_PER_TILE_CYCLE / 4) * 1472 * 1.33e9,
  clockHz: 1.33e9,
  ipuLinkBandwidth: 320e9,
  ipuLinks: 10,
  streamingMemoryBandwidth: 16e9,
  streamingMemoryCapacity: 65e9,
  hostLinkBandwidth: 5.5e9,
  syncHopLatency: 15e-9,
});

/** The Bow IPU: the GC200's tiles at 1.85 GHz. */
export const BOW: IpuTargetSpec = Object.freeze({
  ...GC200,
  ipu: 'Bow',
  peakFlopsFp16: FP16_FLOPS_PER_TILE_CYCLE * 1472 * 1.85e9,
  peakFlopsFp32: (FP16_FLOPS_PER_TILE_CYCLE / 4) * 1472 * 1.85e9,
  clockHz: 1.85e9,
  streamingMemoryCapacity: 64e9,
});

const TARGETS: Record<IpuTargetName, IpuTargetSpec> = { GC200, Bow: BOW };

const positive = z.number().positive().finite();
const nonNegative = z.number().nonnegative().finite();

/** The schema of a (partial) spec: known keys only, each a finite number, `ipu` one of {@link IPU_TARGETS}. */
export const targetSpecOverrides = z
  .strictObject({
    ipu: z.enum(IPU_TARGETS),
    tiles: z.number().int().positive(),
    memoryPerTile: positive,
    peakFlopsFp16: positive,
    peakFlopsFp32: positive,
    clockHz: positive,
    ipuLinkBandwidth: positive,
    ipuLinks: z.number().int().positive(),
    streamingMemoryBandwidth: positive,
    streamingMemoryCapacity: nonNegative,
    hostLinkBandwidth: positive,
    syncHopLatency: nonNegative,
  })
  .partial();

/**
 * A spec: the IPU named by `overrides.ipu` (default the GC200) with the other
 * `overrides` applied; unknown keys and bad values are errors naming them.
 */
export function targetSpec(overrides: Partial<IpuTargetSpec> = {}, where = 'IPU target'): IpuTargetSpec {
  const parsed = targetSpecOverrides.safeParse(overrides);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join('.') || (issue.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys?.join(', ') : '');
    throw new PoptfjsError(
      `${where}: ${key ? `'${key}': ` : ''}${issue.message}; expected 'ipu' (${IPU_TARGETS.join(' or ')}) and keys ${Object.keys(GC200)
        .filter((k) => k !== 'ipu')
        .join(', ')} with positive numbers`,
      { type: 'device' },
    );
  }
  return Object.freeze({ ...TARGETS[parsed.data.ipu ?? 'GC200'], ...parsed.data });
}

/** In-Processor memory of one IPU, in bytes. */
export function ipuMemory(spec: IpuTargetSpec): number {
  return spec.tiles * spec.memoryPerTile;
}

/** Multiply-accumulates per tile per cycle of the AMP: fp16 with fp16 or fp32 partials, and fp32. */
export function ampMacsPerCycle(spec: IpuTargetSpec): { readonly float16: number; readonly float16Float32Partials: number; readonly float32: number } {
  const perCycle = (flops: number) => flops / (2 * spec.tiles * spec.clockHz);
  return { float16: perCycle(spec.peakFlopsFp16), float16Float32Partials: perCycle(spec.peakFlopsFp16) / 2, float32: perCycle(spec.peakFlopsFp32) };
}

/**
 * Seconds of one sync across `ipus` IPUs: one hop within a card plus one per
 * card pair (two IPUs a card), there and back.
 */
export function ipuSyncSeconds(spec: IpuTargetSpec, ipus: number): number {
  if (ipus <= 1) return 0;
  const hops = 1 + Math.floor(ipus / 4);
  return 2 * hops * spec.syncHopLatency;
}
