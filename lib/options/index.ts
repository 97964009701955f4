/**
 * poptfjs options: `Options` and its groups, the option enumerations,
 * `TensorLocationSettings`, and the execution strategies they hold.
 */
export {
  AutoStage,
  CommGroupType,
  ConnectionType,
  HalfFloatCastingBehavior,
  Liveness,
  MeanReductionStrategy,
  OutputMode,
  PartialsType,
  ReductionType,
  SyncPattern,
  TfjsBackendName,
  VariableRetrievalMode,
} from '../option_vocabulary/enums.js';
export { Options, type OptionsInit } from './options.js';
export {
  type AnchoredTensor,
  type GeneralSettings,
  type GroupSettings,
  type InputReplicaGrouping,
  type OptionsData,
  type OptionsSettings,
  RUNTIME_OPTION_KEYS,
  type RuntimeOptionKey,
} from './options_settings.js';
export { TrainingOptions, type TrainingSettings } from './training_options.js';
export { PrecisionOptions, type PrecisionSettings } from './precision_options.js';
export { TensorLocationsOptions } from './tensor_locations_options.js';
export { DistributedOptions, type DistributedSettings } from './distributed_options.js';
export { JitOptions } from './jit_options.js';
export { PopartOptions, type PopartOptionValue } from './popart_options.js';
export { type TensorLocationData, TensorLocationSettings, type TensorLocationsSettings } from '../option_vocabulary/tensor_location_settings.js';
export { OptionsDataError, type OptionsDataPath } from '../option_vocabulary/options_data_error.js';
export { type ExecutionStrategy, isExecutionStrategy } from '../strategy/execution_strategy.js';
export type {
  ExecutionStrategyData,
  PhaseData,
  PhasedExecutionData,
  StageData,
  StagedExecutionData,
} from '../strategy/execution_strategy_data.js';
export { executionStrategyFromJSON } from '../strategy/execution_strategy_from_json.js';
export { Phase, PhaseSpec, Stage, StageSpec } from '../strategy/stages_and_phases.js';
export {
  PipelinedExecution,
  PipelinedExecutionSpec,
  ShardedExecution,
  ShardedExecutionSpec,
  StagedExecutionSpec,
  type StagedExecutionArgument,
} from '../strategy/staged_execution.js';
export {
  ParallelPhasedExecution,
  ParallelPhasedExecutionSpec,
  type PhaseArgument,
  PhasedExecutionSpec,
  SerialPhasedExecution,
  SerialPhasedExecutionSpec,
} from '../strategy/phased_execution.js';
