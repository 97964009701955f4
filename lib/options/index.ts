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
export { type TensorLocationData, TensorLocationSettings, type TensorLocationsSettings } from '../option_vocabulary/tensor_location_settings.js';
export { OptionsDataError, type OptionsDataPath } from '../option_vocabulary/options_data_error.js';
export {
  type ExecutionStrategy,
  type ExecutionStrategyData,
  executionStrategyFromJSON,
  isExecutionStrategy,
  ParallelPhasedExecution,
  ParallelPhasedExecutionSpec,
  Phase,
  type PhaseArgument,
  type PhaseData,
  PhasedExecutionSpec,
  type PhasedExecutionData,
  PhaseSpec,
  PipelinedExecution,
  PipelinedExecutionSpec,
  SerialPhasedExecution,
  SerialPhasedExecutionSpec,
  ShardedExecution,
  ShardedExecutionSpec,
  Stage,
  type StageData,
  StagedExecutionSpec,
  type StagedExecutionArgument,
  type StagedExecutionData,
  StageSpec,
} from '../strategy/execution_strategy.js';
