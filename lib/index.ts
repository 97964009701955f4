/**
 * poptfjs: the PopTorch programming model for TensorFlow.js.
 *
 * Wrap a tfjs model with {@link trainingModel} or {@link inferenceModel}; it
 * is traced into poptfjs's IR and run on a simulated IPU that computes the
 * real numbers on a tfjs backend.
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from './backend/backend_selection.js';
import { setCompiledGraphWriter } from './executor/compiled_graph_export.js';
import { writeCompiledGraphProto } from './onnx/compiled_graph_proto.js';

await initBackend();
setCompiledGraphWriter(writeCompiledGraphProto);

export { tf };
export { initBackend, currentBackend, BACKEND_NAMES, type BackendName } from './backend/backend_selection.js';
export { wasmThreads, MAX_WASM_THREADS } from './backend/wasm_threads.js';
export {
  withShapeOnlyBackend,
  registerShapeOnlyBackend,
  ShapeOnlyBackend,
  ShapeOnlyError,
  SHAPE_ONLY_BACKEND,
  SHAPE_ONLY_BACKEND_PRIORITY,
  SHAPE_ONLY_MAX_KEPT_ELEMENTS,
  SHAPE_RULES,
  VALUE_DEPENDENT_KERNELS,
  type KernelShapeRule,
  type KernelCall,
  type OutputSpec,
} from './backend/shape_only/index.js';
export {
  PoptfjsError,
  PoptfjsError as Error,
  RecoverableError,
  UnrecoverableError,
  ConfigFileError,
  RecoveryAction,
  PopartException,
  PopartInternalException,
  PopartRuntimeError,
  PoplibsException,
  PoplarException,
  PoplarRuntimeError,
  PoplarApplicationRuntimeError,
  PoplarSystemRuntimeError,
  PoplarUnknownRuntimeError,
  type PoptfjsErrorOptions,
} from './common/errors.js';
export { getLogger, setLogLevel, setPopartLogLevel, setLogDestination, Logger, LOG_LEVELS, type LogLevel } from './common/log.js';
export {
  trainingModel,
  inferenceModel,
  type TrainingExecutor,
  type InferenceExecutor,
  type TrainingModelArgs,
  type InferenceModelArgs,
  type ModelAttributes,
} from './executor/model_wrappers.js';
export { PoplarExecutor, type ModelOutput, type TrainingOutput } from './executor/poplar_executor.js';
export type { NestedTensors, PlainValue } from './trace/nested_values.js';
export { registerCustomArgParser, type CustomArgParser, type ArgumentClass } from './trace/custom_arg_parsers.js';
export { load, type LoadArgs } from './executor/model_wrappers.js';
export { balancedGroups, layerCycles } from './executor/layer_balance.js';
export {
  PLAN_OPTIMIZERS,
  type Plan,
  type PlanRequest,
  type PlanInput,
  type PlanBuild,
  type PlanOptimizerName,
  type PlanOptimizerTarget,
} from './executor/model_plan.js';
export { plan } from './planner/plan.js';
export { onnxPipelineStages, type OnnxPlanRequest } from './planner/onnx_plan.js';
export { autoPlan, type AutoPlan, type AutoPlanRequest, type OnnxAutoPlanRequest } from './planner/auto_plan.js';
export type { Candidate, CandidateChoices } from './planner/search_candidate.js';
export { OptimizerStatePlace, type SearchSpace } from './planner/search_space.js';
export type { StageSplit, SplitBalance } from './planner/stage_splits.js';
export type { SearchReportFiles } from './planner/search_report.js';
export { optionsConfigText } from './options/config_text.js';
export type { CompileAndExportOptions } from './executor/executable_export.js';
export type { EditOptions } from './executor/precompiled_model.js';
export {
  executableCacheStatistics,
  listExecutableCache,
  listCacheTemporaryFiles,
  clearExecutableCache,
  type ExecutableCacheStatistics,
  type CacheEntryInfo,
  type CacheClearResult,
} from './files/executable_cache.js';
export type { TemporaryFile } from './files/atomic_file.js';
export { fileSystemHandler } from './files/file_system_io.js';
export { loadLayersModelFile } from './files/layers_model_loading.js';
export { ExecutableGraphLayer } from './executor/model_reconstruction.js';
export { readExecutableFile, type ExecutableFileContents, type ExportedModel } from './files/executable_file.js';
export { readCheckpointFile, type CheckpointContents } from './files/checkpoint_file.js';
export { describePoptfjsFile } from './report/file_inspection.js';
export { POPTFJS_VERSION } from './files/poptfjs_version.js';
export * from './options/index.js';
export { DataLoader, type DataLoaderOptions, type DataLoaderDataset, type DataLoaderSample, type DataLoaderBatch, type NamedTensors } from './data/data_loader.js';
export { AsynchronousDataAccessor, type AsynchronousDataAccessorOptions, type BatchSource } from './data/asynchronous_data_accessor.js';
/** PopDist's API for programs run by `poptfjs run`: the run's layout and `popdist.Options()` (see `distributed/popdist.ts`). */
export * as popdist from './distributed/popdist.js';
export { instanceBarrier } from './distributed/instance_barrier.js';
export { Block, BeginBlock, BlockFunction, removeBlocks, type BlockSpec } from './trace/blocks.js';
export { moduleRepr } from './trace/module_repr.js';
export { ParameterHandle } from './executor/parameter_handle.js';
export { placeGraph, UNANNOTATED_BLOCK, type Placement, type PlacedStage, type PlacedUnit } from './strategy/placement.js';
export { buildSchedule, scheduleTable, pipelineStages, type Schedule, type ScheduleStep, type ScheduledWork } from './strategy/schedule.js';
export { planText } from './report/plan_text.js';
export { summaryReport } from './report/summary_report.js';
export { writeProfileReports, type ProfileReportFiles } from './report/profile_report.js';
export { RecomputationType, planRecomputation, type RecomputationPlan } from './strategy/recomputation.js';
export { Engine, WORKER_SCRATCH_SIZE, type EngineHost, type TextSink } from './engine/engine.js';
export { Executable, type ExportedExecutable } from './engine/executable.js';
export type { HostBuffer, StreamCallback } from './engine/engine_streams.js';
export type { TimerTimePoint } from './engine/timer_time_point.js';
export type { EngineReport } from './engine/profile_summary.js';
export type { ProgramRun } from './engine/execution_profile.js';
export { RuntimeOptions } from './engine/runtime_options.js';
export type { CycleCounter, LoopRecord, StepInstrumentation, VertexCounter } from './engine/step_instrumentation.js';
export { compileGraph, type EngineOptionFlags } from './compile/graph_compiler.js';
export type { ModelGraph } from './compile/model_graph.js';
export { PROGRAM_NAMES, type ProgramName, type ExecutableProgram } from './executable/program.js';
export { DeviceManager, type DeviceInfo, type AcquireOptions, type ModelDeviceOptions } from './device/device_manager.js';
export { Device, type DeviceKind } from './device/device.js';
export { SimulatedErrorCode, type ErrorLocation } from './device/simulated_errors.js';
export { OutOfMemoryError } from './ipu/out_of_memory_error.js';
export { HostMemoryError, type HostMemoryContext } from './host_memory/host_memory_error.js';
export type { HostMemoryEstimate, WorkerHeapEstimate } from './host_memory/host_memory_estimate.js';
export { hostHeap, hostMemoryPeak, resetHostMemoryPeak, HOST_MEMORY_LIMIT_VARIABLE, WASM_HEAP_LIMIT, type HostHeap } from './backend/host_heap.js';
export { GC200, BOW, IPU_TARGETS, targetSpec, ipuMemory, type IpuTargetSpec, type IpuTargetName } from './ipu/target_spec.js';
export type { MemoryPlan, IpuMemoryUse, MemoryItem, MemoryKind } from './ipu/memory_plan.js';
export type { Timeline, TimelineSegment, IpuActivity, RepeatedStretch, SegmentKind } from './ipu/timeline.js';
export type { HardwareAnalysis } from './ipu/hardware_analysis.js';
export type { CompileOptions, ProgressCallback } from './compile/compile_progress.js';
export { PLAN_STEPS } from './compile/compile_progress.js';
export { isRunningOnIpu } from './trace/running_on_ipu.js';
export { TraceError } from './trace/kernel_recorder.js';
export type { LossFunction, LossSpec } from './trace/loss_function.js';
export { LOSS_NAMES, LOSS_ALIASES, canonicalLossName, lossNamesText, type LossName } from './trace/loss_names.js';
export { irText } from './ir/ir_text.js';
export { Patterns, applyPatterns, type AppliedPatterns } from './ir/patterns/patterns.js';
export { PATTERNS_LEVELS, type PatternsLevel, type Pattern, type PatternContext } from './ir/patterns/pattern.js';
export type { Graph, Node, Value, ValueId, NodeId } from './ir/graph.js';
export * as onnx from './onnx/index.js';
export * as optim from '../optim/index.js';
export { half, isHalf, dtypeOf, type HalfTarget, type PoptfjsDataType } from './precision/half.js';
export {
  roundToFloat16,
  roundFloat16Array,
  isFloat16Value,
  FLOAT16_MAX,
  FLOAT16_MIN_NORMAL,
  FLOAT16_MIN_SUBNORMAL,
  FLOAT16_EPSILON,
  type RoundingRandomness,
} from './precision/float16.js';
export * as ops from '../ops/index.js';
export * as popart from './session/index.js';
