/**
 * How calls of a compiled model are batched, what they return and how
 * gradients are reduced, read from the options and checked.
 */
import { PoptfjsError } from '../common/errors.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { checkBatchFactors, type BatchFactors } from '../executable/batch_plan.js';
import type { GradientReduction } from '../executable/executable.js';
import type { ResolvedOutputMode } from '../executable/output_mode.js';

/** How calls are batched, what they return and how gradients are reduced, from the options. */
export interface ExecutionSettings {
  readonly factors: BatchFactors;
  readonly outputMode: ResolvedOutputMode;
  readonly outputReturnPeriod: number;
  readonly reduction: GradientReduction;
}

/** The execution settings of a training or inference model, checked. */
export function executionSettings(settings: OptionsSettings, training: boolean): ExecutionSettings {
  const factors: BatchFactors = {
    deviceIterations: settings.deviceIterations,
    replicationFactor: settings.replicationFactor,
    inputGroupSize: settings.inputReplicaGrouping.size,
    inputGroupType: settings.inputReplicaGrouping.type,
    gradientAccumulation: training ? settings.training.gradientAccumulation : 1,
  };
  checkBatchFactors(factors);
  const outputMode = settings.outputMode === 'Default' ? (training ? 'Final' : 'All') : settings.outputMode;
  const period = settings.outputReturnPeriod;
  if (outputMode === 'EveryN' && settings.deviceIterations % period !== 0) {
    throw new PoptfjsError(
      `outputMode(EveryN, ${period}) returns every ${period}-th device iteration, so deviceIterations (${settings.deviceIterations}) must be a multiple of ${period}`,
      { type: 'options' },
    );
  }
  const type = settings.training.reductionType;
  if (type !== 'Mean' && type !== 'Sum') {
    throw new PoptfjsError(`accumulationAndReplicationReductionType(${type}) is not valid for gradients; use Mean or Sum`, { type: 'options' });
  }
  return {
    factors,
    outputMode,
    outputReturnPeriod: period,
    reduction: { type, strategy: settings.training.meanReductionStrategy === 'Running' ? 'Running' : 'Post' },
  };
}
