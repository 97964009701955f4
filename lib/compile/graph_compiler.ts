/**
 * Poplar's `compileGraph`: a traced (or imported) graph and its programs
 * compiled into an `Executable`: the IR patterns, the placement on stages
 * and IPUs, the schedule, the streaming transfers, and the hardware analysis
 * (memory and time), refusing a model that does not fit. The one compile
 * path of the model wrappers, the Session API and the `Engine`.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { nameRecord } from '../common/name_record.js';
import { applyPatterns, patternsFromSetting } from '../ir/patterns/patterns.js';
import { analyseHardware, type HardwareAnalysis } from '../ipu/hardware_analysis.js';
import { hostSyncPattern, type HostSyncPattern } from '../ipu/host_io.js';
import { checkHostOverlapSettings } from './host_overlap_check.js';
import { OutOfMemoryError } from '../ipu/out_of_memory_error.js';
import { targetSpec } from '../ipu/target_spec.js';
import { isOffChip, shardFraction, tensorStorage, type TensorStorage } from '../ipu/tensor_storage.js';
import { paramValues, sizeOf, type Graph } from '../ir/graph.js';
import { engineSettings, environmentEngineOptions, withEngineSettings, type EngineOptionsSource } from '../options/engine_options.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { hostBatchSize } from '../executable/batch_plan.js';
import type { Executable, RemoteBufferSpec } from '../executable/executable.js';
import { returnedMicroSteps } from '../executable/output_mode.js';
import { executablePrograms, modelPrograms } from '../executable/program.js';
import { compilerChoices, type CompilerChoices } from '../strategy/compiler_defaults.js';
import { placedSchedule, type PlacedSchedule } from '../executable/placed_schedule.js';
import { buildSchedule, periodicSchedule } from '../strategy/schedule.js';
import { streamingTransfers, type StreamingTransfer } from '../ipu/streaming_transfers.js';
import { inferFloat16 } from '../precision/float16_inference.js';
import { anchorTensors, type AnchoredGraph } from './anchored_tensors.js';
import { checkBufferBroadcast } from './buffer_broadcast.js';
import { CompileProgress, type ProgressCallback } from './compile_progress.js';
import { resolveModelGraph, type ModelGraph, type ResolvedModelGraph } from './model_graph.js';
import { writeCompileOutputs, writeCompileReports } from './compile_outputs.js';

/** Poplar's option flags: option name → value, every value a string (`"true"`, `"4"`, `"./reports"`). */
export type EngineOptionFlags = Readonly<Record<string, string>>;

/** How `compileGraph` and `Engine` refuse an engine option: Poplar's `invalid_option`. */
export function engineOptionsSource(name: string): EngineOptionsSource {
  return { name, error: (message) => new PoptfjsError(message, { type: 'invalid_option' }) };
}

/**
 * Compiles `model` and its programs (by name, run by index; default: those
 * PopART builds for the kind) into an executable, as Poplar's
 * `compileGraph(graph, progs, opt, progressCallBack)`. `options` are Poplar
 * engine options (see `Engine`): checked by name and value, applied under
 * `POPLAR_ENGINE_OPTIONS`, and recorded in the executable. `progress` is told
 * `(done, total)` after each step. An `OutOfMemoryError` if it does not fit
 * (unless `debug.allowOutOfMemory`). The archive, lowered variables and
 * compilation reports the options ask for are written (compile_outputs.ts).
 */
export function compileGraph(
  model: ModelGraph,
  programs?: readonly string[],
  options: EngineOptionFlags = {},
  progress: ProgressCallback | CompileProgress = new CompileProgress(),
): Executable {
  const request = resolveModelGraph(model);
  const steps = progress instanceof CompileProgress ? progress : CompileProgress.ofCompileGraph(progress);
  const engineOptions = { ...options, ...environmentEngineOptions()?.options };
  const settings = settingsWithEngineOptions(request, engineOptions);
  const compile: CompileRequest = { request, settings, syncPattern: hostSyncPattern(settings.syncPattern) };
  const lowered = lowerGraph(compile);
  steps.step();
  const { placement, schedule } = placedSchedule(
    lowered.graph,
    settings,
    request.execution.factors,
    request.kind === 'training',
    request.simulatedOnly ? periodicSchedule : buildSchedule,
  );
  steps.step();
  const placed = { ...lowered, placement, schedule };
  const storage = storagePlan(compile, placed);
  steps.step();
  const hardware = analyseCompiledHardware(compile, placed, storage);
  if (!hardware.memory.fits && !settings.allowOutOfMemory) throw new OutOfMemoryError(hardware.memory, request.microBatchSize, request.modelName);
  steps.step();
  const executable = executableOf(compile, placed, storage, hardware, programs, options);
  writeCompileOutputs(executable, engineOptions);
  writeCompileReports(executable, options);
  return executable;
}

/** The model's settings under the engine options (the program's, then the environment's), checked by name and value. */
function settingsWithEngineOptions(request: ResolvedModelGraph, engineOptions: EngineOptionFlags): OptionsSettings {
  if (Object.keys(engineOptions).length === 0) return request.settings;
  return withEngineSettings(request.settings, engineSettings(engineOptions, engineOptionsSource('compileGraph options')));
}

/** What every step of a compile reads: the model, its settings under the engine options, and how its IPUs meet the host. */
interface CompileRequest {
  readonly request: ResolvedModelGraph;
  readonly settings: OptionsSettings;
  readonly syncPattern: HostSyncPattern;
}

/** The graph as it is compiled: the IR patterns applied, float16 inferred, buffers checked against replication, anchors appended. */
interface LoweredGraph extends AnchoredGraph {
  /** The patterns that fired, by name, with how often. */
  readonly fired: ReadonlyMap<string, number>;
  /** The model's own outputs (before the anchors). */
  readonly outputCount: number;
}

/** The graph with its patterns, float16 values and anchors (the first step of a compile). */
function lowerGraph({ request, settings }: CompileRequest): LoweredGraph {
  const training = request.kind === 'training';
  const { graph: patterned, fired } = applyPatterns(request.graph, patternsFromSetting(settings.patterns), { backend: tf.getBackend(), training });
  const inferred = request.float16Flagged
    ? patterned
    : inferFloat16(patterned, {
        params: request.float16?.params ?? new Set(),
        inputs: request.float16?.inputs ?? new Set(),
        casting: settings.precision.halfFloatCasting,
      });
  const { factors } = request.execution;
  checkHostOverlapSettings(request.graph, settings, request.execution.outputMode);
  checkBufferBroadcast(request.graph, factors.replicationFactor, settings.broadcastBuffers);
  const anchored = anchorTensors(inferred, settings.anchoredTensors, { ...request.execution, deviceIterations: factors.deviceIterations });
  return { ...anchored, fired, outputCount: inferred.roles.outputs.length };
}

/** A lowered graph placed on stages and IPUs, with its schedule. */
type PlacedGraph = LoweredGraph & PlacedSchedule;

/** Where each tensor lives, what streams between the chip and streaming memory, and the remote buffers of what is off chip. */
interface StoragePlan {
  readonly chosen: CompilerChoices;
  readonly storage: TensorStorage;
  readonly transfers: StreamingTransfer[];
  readonly remoteBuffers: RemoteBufferSpec[];
  readonly trainedWeights: ReadonlySet<string>;
  readonly separateAccumulator: boolean;
}

/** The compiler's choices where the user made none (PopTorch's defaults), and what they put off chip. */
function storagePlan({ request, settings }: CompileRequest, placed: PlacedGraph): StoragePlan {
  const training = request.kind === 'training';
  const { factors } = request.execution;
  const { optimizer } = request;
  const trainedWeights = new Set(optimizer?.parameterNames ?? []);
  const separateAccumulator = optimizer?.separateAccumulator(optimizer.settings()) ?? true;
  const chosen = compilerChoices(
    {
      ...(settings.autoRecomputation ? { autoRecomputation: settings.autoRecomputation } : {}),
      tensorLocations: settings.tensorLocations,
      clipsGradients: optimizer?.clipsGradients() ?? false,
      gradientAccumulation: training ? factors.gradientAccumulation : 1,
    },
    placed.placement,
  );
  const storage = tensorStorage(chosen.tensorLocations, factors.replicationFactor);
  const transfers = streamingTransfers(placed.graph, placed.placement, placed.schedule, {
    storage,
    training,
    trainedWeights,
    gradientAccumulation: factors.gradientAccumulation,
    separateAccumulator,
  });
  const slots = optimizer?.stateSlots().map((s) => s.name) ?? [];
  const remoteBuffers = offChipBuffers(placed.graph, storage, factors.replicationFactor, training ? trainedWeights : new Set(), slots);
  return { chosen, storage, transfers, remoteBuffers, trainedWeights, separateAccumulator };
}

/** The memory and time of the placed graph on the target (analyseHardware's request, from the compile's parts). */
function analyseCompiledHardware({ request, settings, syncPattern }: CompileRequest, placed: PlacedGraph, plan: StoragePlan): HardwareAnalysis {
  const { execution, optimizer } = request;
  const { factors } = execution;
  return analyseHardware({
    graph: placed.graph,
    placement: placed.placement,
    schedule: placed.schedule,
    transfers: plan.transfers,
    spec: targetSpec(settings.ipuTarget),
    training: request.kind === 'training',
    deviceIterations: factors.deviceIterations,
    gradientAccumulation: factors.gradientAccumulation,
    replicationFactor: factors.replicationFactor,
    samplesPerCall: hostBatchSize(factors, request.microBatchSize),
    microBatchesPerReplica: factors.deviceIterations * factors.gradientAccumulation,
    returnedMicroBatches: returnedMicroSteps(execution.outputMode, execution.outputReturnPeriod, factors),
    anchoredOutputs: placed.anchors.map((a) => ({ returnedMicroBatches: returnedMicroSteps(a.outputMode, a.outputReturnPeriod, factors) })),
    trainedWeights: plan.trainedWeights,
    optimizerSlots: optimizer?.stateSlots() ?? [],
    ...(optimizer ? { accumulatorPrecision: optimizer.accumulatorPrecision(optimizer.settings()), separateAccumulator: plan.separateAccumulator } : {}),
    availableMemoryProportion: settings.availableMemoryProportion,
    halfPartials: settings.precision.partialsType === 'half',
    storage: plan.storage,
    recomputation: plan.chosen.recomputation,
    weightUpdateSchedule: plan.chosen.weightUpdateSchedule,
    weightNames: request.weightNames,
    syntheticData: settings.syntheticData,
    syncPattern,
  });
}

/** The executable the compile's parts make, with its programs and the engine options the program gave. */
function executableOf(
  { request, settings, syncPattern }: CompileRequest,
  placed: PlacedGraph,
  plan: StoragePlan,
  hardware: HardwareAnalysis,
  programs: readonly string[] | undefined,
  options: EngineOptionFlags,
): Executable {
  const { execution } = request;
  const { precision } = settings;
  return {
    kind: request.kind,
    modelName: request.modelName,
    graph: placed.graph,
    inputSignature: request.inputSignature,
    microBatchSize: request.microBatchSize,
    factors: execution.factors,
    outputMode: execution.outputMode,
    outputReturnPeriod: execution.outputReturnPeriod,
    reduction: execution.reduction,
    outputCount: placed.outputCount,
    singleOutput: placed.outputCount === 1,
    placement: placed.placement,
    schedule: placed.schedule,
    streamingTransfers: plan.transfers,
    hardware,
    firedPatterns: nameRecord(placed.fired),
    replicaGroupings: nameRecord(Object.entries(request.replicaGroupings)),
    broadcastBuffers: settings.broadcastBuffers,
    numerics: {
      stochasticRounding: precision.stochasticRounding,
      floatingPointExceptions: precision.floatingPointExceptions,
      halfPartials: precision.partialsType === 'half',
      halfFloatCasting: precision.halfFloatCasting,
      automaticLossScaling: request.kind === 'training' && settings.training.automaticLossScaling,
    },
    ...(settings.syntheticData ? { syntheticData: true } : {}),
    ...(syncPattern !== 'Full' ? { syncPattern } : {}),
    ...(placed.anchors.length > 0 ? { anchors: placed.anchors } : {}),
    programs: executablePrograms(programs ?? modelPrograms(request.kind), request.kind, 'compileGraph programs'),
    ...(Object.keys(options).length > 0 ? { engineOptions: { ...options } } : {}),
    ...(plan.remoteBuffers.length > 0 ? { remoteBuffers: plan.remoteBuffers } : {}),
  };
}

/** The remote buffers of the weights and optimizer state `storage` keeps off chip, in parameter order. */
function offChipBuffers(graph: Graph, storage: TensorStorage, replicas: number, trained: ReadonlySet<string>, slots: readonly string[]): RemoteBufferSpec[] {
  const buffers: RemoteBufferSpec[] = [];
  for (const [param, value] of paramValues(graph)) {
    const elements = sizeOf(value.shape);
    if (isOffChip(storage.weight, elements))
      buffers.push({ handle: `weights/${param}`, kind: 'weight', param, sharded: shardFraction(storage.weight, elements, replicas) < 1 });
    if (!trained.has(param) || !isOffChip(storage.optimizer, elements)) continue;
    const sharded = shardFraction(storage.optimizer, elements, replicas) < 1;
    for (const slot of slots) buffers.push({ handle: `optimizerState/${slot}/${param}`, kind: 'optimizerState', param, slot, sharded });
  }
  return buffers;
}
