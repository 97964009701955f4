/**
 * A placement and its schedule as text: the stages (blocks, IPU, phase), the
 * IPUs used and reserved, then the schedule table.
 */
import { UNANNOTATED_BLOCK, type Placement } from './placement.js';
import { scheduleTable, type Schedule } from './schedule.js';

/** The plan as text. */
export function planText(placement: Placement, schedule: Schedule): string {
  const lines = [`${placement.strategy}: ${placement.stages.length} stage(s) on ${placement.ipusPerReplica} IPU(s) per replica, ${placement.ipusReserved} IPU(s) reserved`];
  for (const s of placement.stages) {
    const blocks = s.blocks.map((b) => (b === UNANNOTATED_BLOCK ? b : `'${b}'`)).join(', ');
    lines.push(`  stage ${s.index} (id ${s.stageId}) on IPU ${s.ipu}${s.phase !== undefined ? `, phase ${s.phase}` : ''}: blocks ${blocks}`);
  }
  if (placement.phased) {
    const p = placement.phased;
    lines.push(`  ${p.phases} forward phase(s), ${p.separateBackwardPhase ? 'separate' : 'shared'} backward phase, liveness ${p.liveness}`);
  }
  lines.push(`schedule over ${schedule.microBatches} micro-batch(es), ${schedule.steps.length} step(s):`);
  lines.push(scheduleTable(placement, schedule));
  return lines.join('\n');
}
