/**
 * Schedules: the order in which the units of a placement run over the
 * micro-batches of one pipeline run, step by step, IPU by IPU, as plain data
 * that can be printed and tested. Each strategy builds its own:
 *
 * - pipelined: a continuous pipeline; in training the backward units run on
 *   the way back, the last forward unit and its backward unit share a pipeline
 *   stage (PopTorch's Fig. 4.2): `2S - 1` pipeline stages for `S` stages.
 *   Pipeline stage `p` works on micro-batch `t - p` at step `t`, giving
 *   ramp-up, steady state and ramp-down;
 * - sharded: units one after another, one IPU busy at a time;
 * - phased: per micro-batch, the phases in order (the stages of a phase run
 *   in parallel), then the backward phases in reverse order.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Placement } from './placement.js';

/** One unit working on one micro-batch. */
export interface ScheduledWork {
  /** Index into {@link Placement.units}. */
  readonly unit: number;
  readonly microBatch: number;
}

/** What happens in one step of a schedule. */
export interface ScheduleStep {
  readonly work: readonly ScheduledWork[];
  /** The ramp a pipeline step belongs to. */
  readonly ramp?: 'up' | 'steady' | 'down';
  /** The phase number of a phased step (backward phases numbered after the forward ones). */
  readonly phase?: number;
}

/** A schedule over `microBatches` micro-batches. */
export interface Schedule {
  readonly strategy: Placement['strategy'];
  readonly microBatches: number;
  /** The units that form each pipeline stage (pipelined only). */
  readonly pipelineStages?: readonly (readonly number[])[];
  /** The steps of every micro-batch, or of the first {@link listedMicroBatches} when fewer are listed. */
  readonly steps: readonly ScheduleStep[];
  /**
   * Set when `steps` list fewer micro-batches than `microBatches` (a
   * {@link periodicSchedule}): the steps of the other micro-batches repeat
   * what is listed, a pipeline's steady-state step once per micro-batch, and
   * the steps of one micro-batch otherwise.
   */
  readonly listedMicroBatches?: number;
}

function scheduleError(message: string): PoptfjsError {
  return new PoptfjsError(message, { type: 'placement' });
}

/** The pipeline stages of a placement: each a list of units that one IPU runs together. */
export function pipelineStages(placement: Placement, training: boolean): number[][] {
  const S = placement.units.length / 2;
  if (!training) return placement.stages.map((_, k) => [k]);
  const stages: number[][] = [];
  for (let k = 0; k < S - 1; k++) stages.push([k]);
  stages.push([S - 1, S]);
  for (let u = S + 1; u < 2 * S; u++) stages.push([u]);
  return stages;
}

/** Checks the micro-batch count a pipeline needs, with an error giving the numbers and the option to set. */
export function checkPipelineDepth(placement: Placement, training: boolean, microBatches: number): void {
  if (placement.strategy !== 'PipelinedExecution' || placement.stages.length < 2) return;
  const depth = pipelineStages(placement, training).length;
  if (microBatches >= depth) return;
  if (training) {
    throw scheduleError(
      `the pipeline has ${depth} stages (${placement.stages.length} forward, ${depth - placement.stages.length} backward), ` +
        `so gradientAccumulation must be at least ${depth}, but it is ${microBatches}: set opts.Training.gradientAccumulation(${depth}) or more`,
    );
  }
  throw scheduleError(
    `the pipeline has ${depth} stages, so deviceIterations must be at least ${depth}, but it is ${microBatches}: set opts.deviceIterations(${depth}) or more`,
  );
}

function pipelined(placement: Placement, training: boolean, M: number): Schedule {
  const stages = pipelineStages(placement, training);
  const P = stages.length;
  const steps: ScheduleStep[] = [];
  for (let t = 0; t < M + P - 1; t++) {
    const work: ScheduledWork[] = [];
    for (let p = 0; p < P; p++) {
      const mb = t - p;
      if (mb < 0 || mb >= M) continue;
      for (const unit of stages[p]!) work.push({ unit, microBatch: mb });
    }
    const ramp = P === 1 ? 'steady' : t < P - 1 ? 'up' : t >= M ? 'down' : 'steady';
    steps.push({ work, ramp });
  }
  return { strategy: placement.strategy, microBatches: M, pipelineStages: stages, steps };
}

function unitsInOrder(placement: Placement, training: boolean): number[] {
  const forwardUnits = placement.units.length / 2;
  return placement.units.map((_, u) => u).filter((u) => training || u < forwardUnits);
}

function sharded(placement: Placement, training: boolean, M: number): Schedule {
  const steps: ScheduleStep[] = [];
  for (let mb = 0; mb < M; mb++) {
    for (const unit of unitsInOrder(placement, training)) steps.push({ work: [{ unit, microBatch: mb }] });
  }
  return { strategy: placement.strategy, microBatches: M, steps };
}

function phasedSchedule(placement: Placement, training: boolean, M: number): Schedule {
  const phased = placement.phased!;
  const P = phased.phases;
  const steps: ScheduleStep[] = [];
  for (let mb = 0; mb < M; mb++) {
    for (let p = 0; p < P; p++) {
      const shared = training && !phased.separateBackwardPhase && p === P - 1;
      steps.push({ work: (shared ? [p, p + 1] : [p]).map((unit) => ({ unit, microBatch: mb })), phase: p });
    }
    if (!training) continue;
    for (let p = phased.separateBackwardPhase ? P - 1 : P - 2; p >= 0; p--) {
      const phase = phased.separateBackwardPhase ? 2 * P - 1 - p : 2 * P - 2 - p;
      steps.push({ work: [{ unit: 2 * P - 1 - p, microBatch: mb }], phase });
    }
  }
  return { strategy: placement.strategy, microBatches: M, steps };
}

/** The schedule of one pipeline run of `microBatches` micro-batches. */
export function buildSchedule(placement: Placement, training: boolean, microBatches: number): Schedule {
  switch (placement.strategy) {
    case 'PipelinedExecution':
      checkPipelineDepth(placement, training, microBatches);
      return pipelined(placement, training, microBatches);
    case 'ShardedExecution':
      return sharded(placement, training, microBatches);
    default:
      return phasedSchedule(placement, training, microBatches);
  }
}

/**
 * The most work (units × micro-batches) a {@link periodicSchedule} lists in
 * full; a longer schedule lists {@link periodicMicroBatches} micro-batches.
 */
export const MAX_LISTED_WORK = 65536;

/**
 * Micro-batches enough to hold every state of a schedule: a pipeline's
 * steady state repeats the same micro-batches in flight step after step,
 * and other strategies run their micro-batches one after another, so twice
 * the pipeline's depth (1 without a pipeline) plus one covers ramp-up, the
 * steady state and ramp-down.
 */
export function periodicMicroBatches(placement: Placement, training: boolean): number {
  const depth = placement.strategy === 'PipelinedExecution' ? pipelineStages(placement, training).length : 1;
  return 2 * depth + 1;
}

/**
 * The schedule of {@link buildSchedule}, listing every micro-batch's steps
 * when they come to at most {@link MAX_LISTED_WORK} units of work, else
 * those of {@link periodicMicroBatches} micro-batches (see
 * {@link Schedule.listedMicroBatches}): its size does not grow with the
 * number of micro-batches. For what only simulates a schedule (planning), not
 * what runs it.
 */
export function periodicSchedule(placement: Placement, training: boolean, microBatches: number): Schedule {
  const units = training ? placement.units.length : placement.units.length / 2;
  const listed = periodicMicroBatches(placement, training);
  if (microBatches * units <= MAX_LISTED_WORK || microBatches <= listed) return buildSchedule(placement, training, microBatches);
  checkPipelineDepth(placement, training, microBatches);
  return { ...buildSchedule(placement, training, listed), microBatches, listedMicroBatches: listed };
}

/**
 * The schedule as a table: one row per step, one column per IPU, each cell
 * the units working there (`F1:3` is the forward part of stage 1 on
 * micro-batch 3, `B0:1` the backward part of stage 0 on micro-batch 1).
 */
export function scheduleTable(placement: Placement, schedule: Schedule): string {
  const ipus = placement.ipusPerReplica;
  const cells = schedule.steps.map((step) => {
    const row: string[] = new Array(ipus).fill('');
    for (const w of step.work) {
      const unit = placement.units[w.unit]!;
      unit.stages.forEach((stage, i) => {
        const ipu = unit.ipus[i]!;
        const label = `${unit.pass === 'forward' ? 'F' : 'B'}${stage}:${w.microBatch}`;
        row[ipu] = row[ipu] ? `${row[ipu]} ${label}` : label;
      });
    }
    return row.map((c) => c || '.');
  });
  const headers = [
    'step',
    ...Array.from({ length: ipus }, (_, i) => `IPU${i}`),
    ...(schedule.steps.some((s) => s.ramp) ? ['ramp'] : []),
    ...(schedule.steps.some((s) => s.phase !== undefined) ? ['phase'] : []),
  ];
  const rows = cells.map((row, t) => {
    const step = schedule.steps[t]!;
    return [String(t), ...row, ...(step.ramp ? [step.ramp] : []), ...(step.phase !== undefined ? [String(step.phase)] : [])];
  });
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const format = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [format(headers), ...rows.map(format)].join('\n');
}
