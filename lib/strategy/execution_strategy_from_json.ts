/**
 * Rebuilds an execution strategy from its plain data, as read from an options
 * file: the data is validated first, and anything that does not fit is an
 * `OptionsDataError` naming the offending key.
 */
import { z } from 'zod';
import { AutoStage, Liveness } from '../option_vocabulary/enums.js';
import { MAX_CALL_ARGUMENTS } from '../option_vocabulary/config_limits.js';
import { OptionsDataError, optionsDataErrorFromZod } from '../option_vocabulary/options_data_error.js';
import type { ExecutionStrategy } from './execution_strategy.js';
import type { PhasedExecutionData, StagedExecutionData } from './execution_strategy_data.js';
import { ParallelPhasedExecutionSpec, SerialPhasedExecutionSpec } from './phased_execution.js';
import { PipelinedExecutionSpec, ShardedExecutionSpec } from './staged_execution.js';
import { PhaseSpec, StageSpec } from './stages_and_phases.js';

// The lists are bounded because their items become the arguments of one constructor call.
const stageDataSchema = z.strictObject({
  blocks: z.array(z.string().min(1)).min(1).max(MAX_CALL_ARGUMENTS),
  ipu: z.number().int().min(0).optional(),
});
const phaseDataSchema = z.strictObject({ stages: z.array(stageDataSchema).min(1).max(MAX_CALL_ARGUMENTS) });
const autoStageSchema = z.enum(Object.values(AutoStage) as [AutoStage, ...AutoStage[]]);
const livenessSchema = z.enum(Object.values(Liveness) as [Liveness, ...Liveness[]]);

function stagedSchema<const T extends StagedExecutionData['type']>(type: T) {
  return z.strictObject({
    type: z.literal(type),
    autoStage: autoStageSchema.default(AutoStage.SameAsIpu),
    stages: z.array(stageDataSchema).max(MAX_CALL_ARGUMENTS).default([]),
  });
}

function phasedSchema<const T extends PhasedExecutionData['type']>(type: T) {
  return z.strictObject({
    type: z.literal(type),
    phases: z.array(phaseDataSchema).min(1).max(MAX_CALL_ARGUMENTS),
    separateBackwardPhase: z.boolean().default(false),
    tensorsLiveness: livenessSchema.default(Liveness.AlwaysLive),
  });
}

const executionStrategyDataSchema = z.discriminatedUnion('type', [
  stagedSchema('PipelinedExecution'),
  stagedSchema('ShardedExecution'),
  phasedSchema('SerialPhasedExecution'),
  phasedSchema('ParallelPhasedExecution'),
]);

function stageFromData(data: z.infer<typeof stageDataSchema>): StageSpec {
  const stage = new StageSpec(...data.blocks);
  return data.ipu === undefined ? stage : stage.ipu(data.ipu);
}

/**
 * Rebuilds a strategy from the plain data its `toJSON()` produced. Missing
 * `autoStage`, `stages`, `separateBackwardPhase` and `tensorsLiveness` take
 * their defaults; anything else that does not fit is an `OptionsDataError`
 * naming the path of the offending key (`stages[0].ipu`).
 */
export function executionStrategyFromJSON(data: unknown): ExecutionStrategy {
  const parsed = executionStrategyDataSchema.safeParse(data);
  if (!parsed.success) throw optionsDataErrorFromZod(parsed.error);
  const value = parsed.data;
  try {
    return strategyFromData(value);
  } catch (error) {
    if (error instanceof OptionsDataError) throw error;
    throw new OptionsDataError([], error instanceof Error ? error.message : String(error), error);
  }
}

function strategyFromData(value: z.infer<typeof executionStrategyDataSchema>): ExecutionStrategy {
  switch (value.type) {
    case 'PipelinedExecution':
    case 'ShardedExecution': {
      if (value.stages.length > 0 && value.autoStage !== AutoStage.SameAsIpu) {
        throw new OptionsDataError(['autoStage'], 'autoStage applies only when no stages are given');
      }
      const args = value.stages.length > 0 ? value.stages.map(stageFromData) : [value.autoStage];
      return value.type === 'PipelinedExecution' ? new PipelinedExecutionSpec(...args) : new ShardedExecutionSpec(...args);
    }
    case 'SerialPhasedExecution':
    case 'ParallelPhasedExecution': {
      const phases = value.phases.map((phase) => new PhaseSpec(...phase.stages.map(stageFromData)));
      const strategy = value.type === 'SerialPhasedExecution' ? new SerialPhasedExecutionSpec(...phases) : new ParallelPhasedExecutionSpec(...phases);
      return strategy.useSeparateBackwardPhase(value.separateBackwardPhase).setTensorsLiveness(value.tensorsLiveness);
    }
  }
}
