/**
 * The summary report of a compiled model, as text: the target, the memory of
 * each IPU (used and available, largest items), the placement and schedule,
 * and, when profiling is enabled, the simulated execution (cycles,
 * throughput, utilization, pipeline bubble). Without profiling it says
 * 'Execution profiling not enabled', as Poplar does, and how to enable it. When the IPUs ran on
 * worker threads (`parallelIpus`), it ends with what was measured on the
 * host over the last call, next to the simulated utilization.
 */
import { formatBytes } from '../ipu/byte_size.js';
import type { InstanceAllReduce } from '../device/host_network.js';
import { ipuMemory } from '../ipu/target_spec.js';
import type { Executable } from '../executable/executable.js';
import type { MeasuredOverlap } from '../runtime/worker_ipus/measured_overlap.js';
import { onOneIpu, planText } from './plan_text.js';

function percent(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

/** What the summary says in place of the simulated execution when profiling is off: that it is, and how to turn it on. */
export const PROFILING_NOT_ENABLED = [
  'Execution profiling not enabled: the simulated time of a call is reported once it is, with',
  "  opts.enableProfiling('./reports') (a PopART session: engineOptions { 'autoReport.all': 'true' }), or",
  `  POPTFJS_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./reports"}' in the environment;`,
  '  the HTML, JSON and Chrome trace reports are then written into ./reports.',
].join('\n');

/**
 * The I/O tiles' memory of each IPU and the inputs and outputs whose host
 * transfers overlap compute on them (`ops.setOverlapForInput` /
 * `setOverlapForOutput`), with their modes; nothing without I/O tiles.
 */
function ioTileLines(executable: Executable): string[] {
  const { spec } = executable.hardware;
  const marks = executable.graph.roles.hostOverlap ?? [];
  const lines = executable.hardware.memory.ipus.flatMap((m) =>
    m.ioTiles
      ? [
          `  IPU ${m.ipu} I/O tiles (${m.ioTiles.capacity / spec.memoryPerTile}): ${formatBytes(m.ioTiles.hostBuffers)} of ${formatBytes(m.ioTiles.capacity)} hold overlapped host transfers' buffers (two micro-batches each)` +
            `${m.ioTiles.hostBuffers > m.ioTiles.capacity ? `  OUT OF MEMORY by ${formatBytes(m.ioTiles.hostBuffers - m.ioTiles.capacity)}` : ''}`,
        ]
      : [],
  );
  if (marks.length > 0)
    lines.push(`  host I/O overlapping compute: ${marks.map((mark) => `${mark.of}${mark.of === 'loss' ? '' : ` ${mark.index}`} (${mark.mode})`).join(', ')}`);
  return lines;
}

/** The memory of each IPU as a table, one row per IPU. */
export function memoryTable(executable: Executable): string {
  const { memory, spec } = executable.hardware;
  const lines = [`Memory per IPU (capacity ${formatBytes(ipuMemory(spec))}: ${spec.tiles} tiles × ${formatBytes(spec.memoryPerTile)}):`];
  lines.push('  IPU  used        of capacity  weights     opt.+accum. activations  temporary   code+exchange  largest item');
  for (const m of memory.ipus) {
    const b = m.byKind;
    const largest = m.items[0];
    lines.push(
      `  ${String(m.ipu).padEnd(4)} ${formatBytes(m.used).padEnd(11)} ${percent(m.used / m.capacity).padEnd(12)} ${formatBytes(b.weights).padEnd(11)} ` +
        `${formatBytes(b['optimizer state'] + b['gradient accumulators']).padEnd(11)} ${formatBytes(b.activations).padEnd(12)} ` +
        `${formatBytes(b.temporary).padEnd(11)} ${formatBytes(b['code and exchange']).padEnd(14)} ` +
        `${largest ? `${largest.kind} ${largest.name.includes(' ') ? `(${largest.name})` : `'${largest.name}'`}` : '-'}` +
        `${m.used > m.capacity ? `  OUT OF MEMORY by ${formatBytes(m.used - m.capacity)}` : ''}`,
    );
  }
  lines.push(...ioTileLines(executable));
  const recomputation = executable.hardware.recomputation;
  if (recomputation) lines.push(`  recomputation ${recomputation.type}: ${recomputation.values} activations recomputed by ${recomputation.rerunNodes} re-run forward nodes`);
  return lines.join('\n');
}

/**
 * The pipeline bubble in a sentence: the share of the schedule's IPU time
 * spent idle, why, and what makes it smaller; on one IPU, that there is none.
 */
export function bubbleText(executable: Executable): string {
  const { placement, hardware } = executable;
  if (onOneIpu(placement)) return 'pipeline bubble: none, the model runs on one IPU';
  const idle = `pipeline bubble: ${percent(hardware.timeline.bubbleFraction)} of the schedule's IPU time idle`;
  if (placement.strategy === 'PipelinedExecution') {
    const more = executable.kind === 'training' ? 'gradient accumulation' : 'device iterations';
    return `${idle}, waiting while the pipeline fills and drains; more micro-batches per step (${more}) make it smaller`;
  }
  if (placement.strategy === 'ShardedExecution') return `${idle}: sharded IPUs take turns, each waiting while the others compute`;
  return `${idle}, waiting for other IPUs and for streaming memory between phases`;
}

/** The simulated execution of one call. */
export function executionSummary(executable: Executable): string {
  const { timeline, spec } = executable.hardware;
  const lines = [
    'Simulated execution of one call:',
    `  cycles: ${timeline.cycles} (${(timeline.duration * 1e3).toFixed(3)} ms at ${(spec.clockHz / 1e9).toFixed(2)} GHz)`,
    `  throughput: ${timeline.throughput.toFixed(1)} samples/s`,
    `  ${bubbleText(executable)}`,
    `  host I/O: ${executable.syncPattern === 'SinglePipeline' ? 'each IPU syncs with the host on its own (SinglePipeline)' : 'every IPU waits for each host transfer (Full)'}`,
    '  IPU  utilization  compute      exchange     streaming    sync         idle',
  ];
  const ms = (s: number) => `${(s * 1e3).toFixed(3)} ms`;
  for (const a of timeline.ipus) {
    lines.push(
      `  ${String(a.ipu).padEnd(4)} ${percent(a.utilization).padEnd(12)} ${ms(a.compute).padEnd(12)} ${ms(a.exchange).padEnd(12)} ` +
        `${ms(a.streaming).padEnd(12)} ${ms(a.sync).padEnd(12)} ${ms(a.idle)}`,
    );
  }
  return lines.join('\n');
}

/**
 * What the worker IPUs measured over the last call (wall-clock, on the
 * host), each IPU next to its simulated utilization: busy time, its share of
 * the wall time, and the overlap (sum of busy time / wall time).
 */
export function measuredOverlapSummary(executable: Executable, measured: MeasuredOverlap): string {
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const lines = [
    'Measured on the host, last call, IPUs on worker threads (parallelIpus):',
    `  wall: ${ms(measured.wallMs)}, overlap ${measured.overlap.toFixed(2)} (sum of busy time / wall time)`,
    `  main thread packing and unpacking: ${ms(measured.mainTransferMs)}; ${mb(measured.bytesToWorkers)} to the workers, ${mb(measured.bytesFromWorkers)} back`,
    '  IPU  busy         of wall  computing    work items  simulated utilization',
  ];
  for (const m of measured.ipus) {
    const simulated = executable.hardware.timeline.ipus.find((a) => a.ipu === m.ipu);
    lines.push(
      `  ${String(m.ipu).padEnd(4)} ${ms(m.busyMs).padEnd(12)} ${percent(measured.wallMs > 0 ? m.busyMs / measured.wallMs : 0).padEnd(8)} ` +
        `${ms(m.computeMs).padEnd(12)} ${String(m.workItems).padEnd(11)} ${simulated ? percent(simulated.utilization) : '-'}`,
    );
  }
  return lines.join('\n');
}

/**
 * The gradient all-reduce across the instances of a multi-instance run, over
 * the host network, and the simulated time of a call with it.
 */
export function instanceAllReduceSummary(executable: Executable, allReduce: InstanceAllReduce): string {
  const ms = (s: number) => `${(s * 1e3).toFixed(3)} ms`;
  const call = executable.hardware.timeline.duration + allReduce.secondsPerCall;
  const n = allReduce.instances;
  return [
    `Gradient all-reduce across ${n} instances over the host network (${((allReduce.bandwidth * 8) / 1e9).toFixed(1)} Gbit/s):`,
    `  ${formatBytes(allReduce.gradientBytes)} of gradients per update, 2(${n}-1)/${n} of them over each instance's link: ${ms(allReduce.secondsPerUpdate)} per update`,
    `  ${allReduce.updatesPerCall} update(s) per call: ${ms(allReduce.secondsPerCall)}; a call takes ${ms(call)} with it (${percent(call > 0 ? allReduce.secondsPerCall / call : 0)} in this all-reduce)`,
  ].join('\n');
}

/**
 * The whole summary report; `measured`, when the IPUs ran on worker threads,
 * adds what the last call measured, and `allReduce`, for an instance of a
 * multi-instance run, the gradient all-reduce across the instances.
 */
export function summaryReport(executable: Executable, profiling: boolean, measured?: MeasuredOverlap, allReduce?: InstanceAllReduce): string {
  const sections = [
    `Model '${executable.modelName}' compiled for ${executable.kind}, on ${executable.placement.ipusReserved} IPU(s)`,
    memoryTable(executable),
    planText(executable.placement, executable.schedule, executable.streamingTransfers),
    profiling ? executionSummary(executable) : PROFILING_NOT_ENABLED,
    ...(measured ? [measuredOverlapSummary(executable, measured)] : []),
    ...(allReduce ? [instanceAllReduceSummary(executable, allReduce)] : []),
  ];
  return sections.join('\n\n');
}
