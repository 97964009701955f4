/**
 * The placement and schedule of a graph as the options ask for them: the
 * step compiling a model and checking a step's host memory share.
 */
import type { Graph } from '../ir/graph.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { placeGraph, type Placement } from '../strategy/placement.js';
import { buildSchedule, type Schedule } from '../strategy/schedule.js';
import type { BatchFactors } from './batch_plan.js';

/** A graph's placement on the IPUs and the schedule of its micro-batches. */
export interface PlacedSchedule {
  readonly placement: Placement;
  readonly schedule: Schedule;
}

/**
 * Places `graph` with the options' execution strategy on the replicas
 * `factors` ask for, and schedules its micro-batches (a training step's
 * gradient accumulation, else the device iterations) with `scheduleOf`
 * (`buildSchedule`, or `periodicSchedule` for what only simulates it).
 */
export function placedSchedule(
  graph: Graph,
  settings: Pick<OptionsSettings, 'executionStrategy' | 'autoRoundNumIPUs'>,
  factors: BatchFactors,
  training: boolean,
  scheduleOf: (placement: Placement, training: boolean, microBatches: number) => Schedule = buildSchedule,
): PlacedSchedule {
  const placement = placeGraph(graph, {
    strategy: settings.executionStrategy.toJSON(),
    replicationFactor: factors.replicationFactor,
    autoRoundNumIPUs: settings.autoRoundNumIPUs,
  });
  return { placement, schedule: scheduleOf(placement, training, training ? factors.gradientAccumulation : factors.deviceIterations) };
}
