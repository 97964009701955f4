/**
 * The summary of a plan (`plan()`, a candidate of `autoPlan()`): its verdict
 * first, in one line — whether it fits, the simulated throughput and the
 * fullest IPU — then the memory of each IPU, the placement and the simulated
 * execution of one call. A plan always has its simulated execution (planning
 * computes it), so, unlike a compiled model's summary, it never says that
 * profiling is off.
 */
import { formatBytes } from '../ipu/byte_size.js';
import type { IpuMemoryUse, MemoryPlan } from '../ipu/memory_plan.js';
import type { Executable } from '../executable/executable.js';
import { planText } from './plan_text.js';
import { executionSummary, memoryTable } from './summary_report.js';

/** The IPU whose memory is fullest, as a share of its capacity (the first such IPU). */
export function fullestIpu(memory: MemoryPlan): IpuMemoryUse {
  return memory.ipus.reduce((fullest, m) => (m.used / m.capacity > fullest.used / fullest.capacity ? m : fullest));
}

/** The verdict of a plan in one line: `fits: 1234.5 samples/s; fullest IPU 2, 812.0 MiB of 897.0 MiB (90.5%)`. */
export function planVerdict(executable: Executable): string {
  const { memory, timeline } = executable.hardware;
  const fullest = fullestIpu(memory);
  const share = `${(100 * (fullest.used / fullest.capacity)).toFixed(1)}%`;
  const over = fullest.used > fullest.capacity ? `, over by ${formatBytes(fullest.used - fullest.capacity)}` : '';
  const streaming = memory.ipus.find((m) => !(m.streaming.bytes <= executable.hardware.spec.streamingMemoryCapacity));
  return (
    `${memory.fits ? 'fits' : 'does NOT fit'}: ${timeline.throughput.toFixed(1)} samples/s (simulated); ` +
    `fullest IPU ${fullest.ipu}, ${formatBytes(fullest.used)} of ${formatBytes(fullest.capacity)} (${share}${over})` +
    (streaming
      ? `; IPU ${streaming.ipu}'s streaming memory holds ${formatBytes(streaming.streaming.bytes)}, more than its ${formatBytes(executable.hardware.spec.streamingMemoryCapacity)}`
      : '')
  );
}

/** The summary of a plan: the verdict, then memory per IPU, placement and schedule, and the simulated execution of a call. */
export function planSummary(executable: Executable): string {
  return [
    `Plan of '${executable.modelName}' for ${executable.kind} on ${executable.placement.ipusReserved} IPU(s): ${planVerdict(executable)}`,
    memoryTable(executable),
    planText(executable.placement, executable.schedule, executable.streamingTransfers),
    executionSummary(executable),
  ].join('\n\n');
}
