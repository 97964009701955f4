/**
 * A placement and its schedule as text: the stages (blocks, IPU, phase), the
 * IPUs used and reserved, then the schedule table.
 */
import { UNANNOTATED_BLOCK, type Placement } from '../strategy/placement.js';
import { scheduleTable, type Schedule } from '../strategy/schedule.js';
import type { StreamingTransfer } from '../ipu/streaming_transfers.js';

/** True if the whole model runs on one IPU per replica, in one stage: there is no pipeline, shard or phase to speak of. */
export function onOneIpu(placement: Placement): boolean {
  return placement.stages.length === 1 && placement.ipusPerReplica === 1 && placement.phased === undefined;
}

/** How the model is split, in a few words: `One IPU (no pipeline)`, or the strategy with its stages and IPUs. */
export function strategyText(placement: Placement): string {
  if (onOneIpu(placement)) return 'One IPU (no pipeline)';
  return `${placement.strategy}: ${placement.stages.length} stage(s) on ${placement.ipusPerReplica} IPU(s) per replica`;
}

/** Blocks a stage lists by name; a stage with more (an ONNX model split node by node) lists its first and last few. */
const LISTED_BLOCKS = 8;

/** A stage's blocks, quoted; past {@link LISTED_BLOCKS}, the first three and the last two around how many lie between. */
function blockList(blocks: readonly string[]): string {
  const quoted = blocks.map((b) => (b === UNANNOTATED_BLOCK ? b : `'${b}'`));
  if (quoted.length <= LISTED_BLOCKS) return quoted.join(', ');
  return `${[...quoted.slice(0, 3), `… ${quoted.length - 5} more …`, ...quoted.slice(-2)].join(', ')} (${quoted.length} blocks)`;
}

/** The plan as text. */
export function planText(placement: Placement, schedule: Schedule, transfers: readonly StreamingTransfer[] = []): string {
  const lines = [`${strategyText(placement)}, ${placement.ipusReserved} IPU(s) reserved`];
  for (const s of placement.stages) {
    lines.push(`  stage ${s.index} (id ${s.stageId}) on IPU ${s.ipu}${s.phase !== undefined ? `, phase ${s.phase}` : ''}: blocks ${blockList(s.blocks)}`);
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
