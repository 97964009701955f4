/**
 * A placement and its schedule as text: the stages (blocks, IPU, phase), the
 * IPUs used and reserved, then the schedule table.
 */
import { UNANNOTATED_BLOCK, type Placement } from '../strategy/placement.js';
import { scheduleTable, type Schedule } from '../strategy/schedule.js';
import type { StreamingTransfer } from '../ipu/streaming_transfers.js';

/** The plan as text. */
export function planText(placement: Placement, schedule: Schedule, transfers: readonly StreamingTransfer[] = []): string {
  const lines = [`${placement.strategy}: ${placement.stages.length} stage(s) on ${placement.ipusPerReplica} IPU(s) per replica, ${placement.ipusReserved} IPU(s) reserved`];
  for (const s of placement.stages) {
    const blocks = s.blocks.map((b) => (b === UNANNOTATED_BLOCK ? b : `'${b}'`)).join(', ');
    lines.push(`  stage ${s.index} (id ${s.stageId}) on IPU ${s.ipu}${s.phase !== undefined ? `, phase ${s.phase}` : ''}: blocks ${blocks}`);
  }
  if (placement.phased) {
    const p = placement.phased;
    lines.push(`  ${p.phases} forward phase(s), ${p.separateBackwardPhase ? 'separate' : 'shared'} backward phase, liveness ${p.liveness}`);
  }
  const listed = schedule.listedMicroBatches;
  lines.push(
    listed === undefined
      ? `schedule over ${schedule.microBatches} micro-batch(es), ${schedule.steps.length} step(s):`
      : `schedule over ${schedule.microBatches} micro-batches, the ${schedule.steps.length} step(s) of the first ${listed} listed (the others repeat them):`,
  );
  lines.push(scheduleTable(placement, schedule));
  if (transfers.length > 0) {
    const total = (direction: 'load' | 'store', kind: 'weights' | 'activations') =>
      transfers.filter((t) => t.direction === direction && t.kind === kind).reduce((sum, t) => sum + t.bytes, 0);
    lines.push(
      `streaming memory per micro-batch: loads ${total('load', 'weights')} B of weights and ${total('load', 'activations')} B of activations, ` +
        `stores ${total('store', 'weights')} B of weights and ${total('store', 'activations')} B of activations`,
    );
  }
  return lines.join('\n');
}
