/**
 * What an instrumented engine records of each run of the step, as Poplar's
 * instrumentation options choose it (`debug.instrument` turns on every
 * `debug.instrument*` switch not set otherwise; the execution profile of
 * `autoReport` sets `debug.instrument` unless it is set):
 *
 * - `debug.instrumentCompute`: the last cycle count of each compute set (a
 *   stage's forward or backward pass, or the weight update, whatever
 *   micro-batch it ran on), per IPU, at `debug.computeInstrumentationLevel`:
 *   `tile` keeps a counter on every tile of the IPU, `ipu` one on
 *   `debug.profilingTile` of each IPU, `device` one per compute set on
 *   `debug.profilingTile` of IPU 0 (the longest IPU's count); `vertex` the
 *   compute cycles of every vertex (kernel) instead, to the nearest whole cycle, over its IPU's compute
 *   tiles (at the default available-memory proportion: the executable does
 *   not keep the proportions `Options` set per IPU). The cost model gives every tile
 *   of an IPU the same cycles for a compute set, so `tile` and `ipu` hold the
 *   same counts, stored on different tiles.
 * - `debug.instrumentExternalExchange`: the last cycle count of each
 *   exchange with the host and with streaming memory, per IPU.
 * - `debug.instrumentControlFlow`: the step's loops and their iteration
 *   counts (device iterations, and gradient accumulation in training), on
 *   `debug.branchRecordTile`.
 *
 * The counts are the cost model's: the timeline of one call, and each
 * kernel's compute cycles.
 */
import { kernelCost } from '../ipu/kernel_cycles.js';
import type { SegmentKind } from '../ipu/timeline.js';
import type { Executable } from '../executable/executable.js';
import { kernelTarget } from '../report/layer_costs.js';

/** The cycle count of a compute set or exchange on one IPU, and the tile that stores it (`every` tile of the IPU at the `tile` level). */
export interface CycleCounter {
  readonly ipu: number;
  /** The compute set (`F0 B1`, `update`) or exchange (`host → device`, `load`). */
  readonly name: string;
  readonly cycles: number;
  readonly tile: number | 'every';
}

/** The cycle count of one vertex (kernel) on its IPU. */
export interface VertexCounter {
  readonly ipu: number;
  /** The kernel, and its node in the compiled graph. */
  readonly vertex: string;
  readonly node: number;
  readonly cycles: number;
}

/** A loop of the step and how many times its body ran in one run. */
export interface LoopRecord {
  readonly loop: 'deviceIterations' | 'gradientAccumulation';
  readonly iterations: number;
}

/** What an instrumented engine records of one run of the step. */
export interface StepInstrumentation {
  readonly computeSets?: readonly CycleCounter[];
  readonly vertices?: readonly VertexCounter[];
  readonly externalExchanges?: readonly CycleCounter[];
  readonly controlFlow?: { readonly tile: number; readonly loops: readonly LoopRecord[] };
}

/** The instrumentation options as the engine reads them. */
export interface InstrumentationSwitches {
  readonly compute: boolean;
  readonly externalExchange: boolean;
  readonly controlFlow: boolean;
  readonly level: 'vertex' | 'tile' | 'ipu' | 'device';
  /** The tile of each IPU that holds the counters at the `ipu` and `device` levels. */
  readonly profilingTile: number;
  /** The tile of the device that holds the control-flow records. */
  readonly branchRecordTile: number;
}

/** The switches of `options`; `executionProfile` is whether `autoReport` asks for the execution profile. */
export function instrumentationSwitches(options: Readonly<Record<string, string>>, executionProfile: boolean, executable: Executable): InstrumentationSwitches {
  const { tiles } = executable.hardware.spec;
  const instrument = options['debug.instrument'] ?? String(executionProfile);
  const on = (key: string) => (options[key] ?? instrument) === 'true';
  return {
    compute: on('debug.instrumentCompute'),
    externalExchange: on('debug.instrumentExternalExchange'),
    controlFlow: on('debug.instrumentControlFlow'),
    level: (options['debug.computeInstrumentationLevel'] ?? 'tile') as InstrumentationSwitches['level'],
    profilingTile: Number(options['debug.profilingTile'] ?? tiles - 1),
    branchRecordTile: Number(options['debug.branchRecordTile'] ?? tiles * executable.placement.ipusReserved - 1),
  };
}

/** True when any switch is on: the engine records runs in its execution profile. */
export function isInstrumented(switches: InstrumentationSwitches): boolean {
  return switches.compute || switches.externalExchange || switches.controlFlow;
}

const EXTERNAL: readonly SegmentKind[] = ['host', 'streaming'];
const COMPUTE: readonly SegmentKind[] = ['compute', 'update'];

/** The last cycle count of each name among the segments of `kinds`, per IPU, in the order first seen. */
function lastCounts(executable: Executable, kinds: readonly SegmentKind[], name: (label: string) => string): Array<{ ipu: number; name: string; cycles: number }> {
  const { timeline, spec } = executable.hardware;
  const counts = new Map<string, { ipu: number; name: string; cycles: number }>();
  for (const segment of timeline.segments) {
    if (!kinds.includes(segment.kind)) continue;
    const cycles = Math.round((segment.end - segment.start) * spec.clockHz);
    if (cycles <= 0) continue;
    const n = segment.kind === 'update' ? 'update' : name(segment.label);
    counts.set(`${segment.ipu}\u0000${n}`, { ipu: segment.ipu, name: n, cycles });
  }
  return [...counts.values()];
}

/** What each run of the step of `executable` records under `switches`. */
export function stepInstrumentation(executable: Executable, switches: InstrumentationSwitches): StepInstrumentation {
  const { tiles } = executable.hardware.spec;
  const record: { -readonly [K in keyof StepInstrumentation]: StepInstrumentation[K] } = {};
  if (switches.compute && switches.level === 'vertex') {
    const { graph, placement, hardware } = executable;
    const target = kernelTarget(executable);
    const computeTiles = hardware.memory.ipus.map((use) => Math.max(1, Math.round(use.capacity / hardware.spec.memoryPerTile)));
    record.vertices = graph.nodes.map((node) => {
      const ipu = placement.stages[placement.nodeStages[node.id]!]!.ipu;
      return { ipu, vertex: node.kernel, node: node.id, cycles: Math.round(kernelCost(graph, node, { ...target, tiles: computeTiles[ipu] ?? target.tiles }).compute) };
    });
  } else if (switches.compute) {
    // A compute set is the same program whichever micro-batch it runs on: `F1:3 B0:1` is `F1 B0`.
    const sets = lastCounts(executable, COMPUTE, (label) => label.replace(/:\d+/g, ''));
    if (switches.level === 'device') {
      const longest = new Map<string, number>();
      for (const s of sets) longest.set(s.name, Math.max(longest.get(s.name) ?? 0, s.cycles));
      record.computeSets = [...longest].map(([name, cycles]) => ({ ipu: 0, name, cycles, tile: switches.profilingTile }));
    } else {
      record.computeSets = sets.map((s) => ({ ...s, tile: switches.level === 'tile' ? 'every' : s.ipu * tiles + switches.profilingTile }));
    }
  }
  if (switches.externalExchange) record.externalExchanges = lastCounts(executable, EXTERNAL, (label) => label).map((s) => ({ ...s, tile: 'every' }));
  if (switches.controlFlow) {
    const f = executable.factors;
    const loops: LoopRecord[] = [{ loop: 'deviceIterations', iterations: f.deviceIterations }];
    if (executable.kind === 'training' && f.gradientAccumulation > 1) loops.push({ loop: 'gradientAccumulation', iterations: f.deviceIterations * f.gradientAccumulation });
    record.controlFlow = { tile: switches.branchRecordTile, loops };
  }
  return record;
}
