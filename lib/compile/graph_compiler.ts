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
import { analyseHardware } from '../ipu/hardware_analysis.js';
import { hostSyncPattern } from '../ipu/host_io.js';
import { OutOfMemoryError } from '../ipu/out_of_memory_error.js';
import { targetSpec } from '../ipu/target_spec.js';
import { isOffChip, shardFraction, tensorStorage, type TensorStorage } from '../ipu/tensor_storage.js';
import { paramValues, sizeOf, type Graph } from '../ir/graph.js';
import { engineSettings, environmentEngineOptions, withEngineSettings, type EngineOptionsSource } from '../options/engine_options.js';
import { hostBatchSize } from '../executable/batch_plan.js';
import type { Executable, RemoteBufferSpec } from '../executable/executable.js';
import { returnedMicroSteps } from '../executable/output_mode.js';
import { executablePrograms, modelPrograms } from '../executable/program.js';
import { compilerChoices } from '../strategy/compiler_defaults.js';
import { placedSchedule } from '../executable/placed_schedule.js';
import { buildSchedule, periodicSchedule } from '../strategy/schedule.js';
import { streamingTransfers } from '../ipu/streaming_transfers.js';
import { inferFloat16 } from '../precision/float16_inference.js';
import { anchorTensors } from './anchored_tensors.js';
import { checkBufferBroadcast } from './buffer_broadcast.js';
import { CompileProgress, type ProgressCallback } from './compile_progress.js';
import { resolveModelGraph, type ModelGraph } from './model_graph.js';
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
  const checked = Object.keys(engineOptions).length > 0 ? engineSettings(engineOptions, engineOptionsSource('compileGraph options')) : undefined;
  const settings = checked ? withEngineSettings(request.settings, checked) : request.settings;
  const { execution } = request;
  const { factors } = execution;
  const training = request.kind === 'training';
  const syncPattern = hostSyncPattern(settings.syncPattern);
  const patterned = applyPatterns(request.graph, patternsFromSetting(settings.patterns), { backend: tf.getBackend(), training });
  const { fired } = patterned;
  const precision = settings.precision;
  const inferred = request.float16Flagged
    ? patterned.graph
    : inferFloat16(patterned.graph, {
        params: request.float16?.params ?? new Set(),
        inputs: request.float16?.inputs ?? new Set(),
        casting: precision.halfFloatCasting,
      });
  checkBufferBroadcast(request.graph, factors.replicationFactor, settings.broadcastBuffers);
  const { graph, anchors } = anchorTensors(inferred, settings.anchoredTensors, { ...execution, deviceIterations: factors.deviceIterations });
  steps.step();
  const { placement, schedule } = placedSchedule(graph, settings, factors, training, request.simulatedOnly ? periodicSchedule : buildSchedule);
  steps.step();
  const optimizer = request.optimizer;
  const trainedWeights = new Set(optimizer?.parameterNames ?? []);
  const separateAccumulator = optimizer?.separateAccumulator(optimizer.settings()) ?? true;
  const chosen = compilerChoices(
    {
      ...(settings.autoRecomputation ? { autoRecomputation: settings.autoRecomputation } : {}),
      tensorLocations: settings.tensorLocations,
      clipsGradients: optimizer?.clipsGradients() ?? false,
      gradientAccumulation: training ? factors.gradientAccumulation : 1,
    },
    placement,
  );
  const storage = tensorStorage(chosen.tensorLocations, factors.replicationFactor);
  const transfers = streamingTransfers(graph, placement, schedule, {
    storage,
    training,
    trainedWeights,
    gradientAccumulation: factors.gradientAccumulation,
    separateAccumulator,
  });
  const remoteBuffers = offChipBuffers(graph, storage, factors.replicationFactor, training ? trainedWeights : new Set(), optimizer?.stateSlots().map((s) => s.name) ?? []);
  steps.step();
  const hardware = analyseHardware({
    graph,
    placement,
    schedule,
    transfers,
    spec: targetSpec(settings.ipuTarget),
    training,
    deviceIterations: factors.deviceIterations,
    gradientAccumulation: factors.gradientAccumulation,
    replicationFactor: factors.replicationFactor,
    samplesPerCall: hostBatchSize(factors, request.microBatchSize),
    microBatchesPerReplica: factors.deviceIterations * factors.gradientAccumulation,
    returnedMicroBatches: returnedMicroSteps(execution.outputMode, execution.outputReturnPeriod, factors),
    anchoredOutputs: anchors.map((a) => ({ returnedMicroBatches: returnedMicroSteps(a.outputMode, a.outputReturnPeriod, factors) })),
    trainedWeights,
    optimizerSlots: optimizer?.stateSlots() ?? [],
    ...(optimizer ? { accumulatorPrecision: optimizer.accumulatorPrecision(optimizer.settings()), separateAccumulator } : {}),
    availableMemoryProportion: settings.availableMemoryProportion,
    halfPartials: precision.partialsType === 'half',
    storage,
    recomputation: chosen.recomputation,
    weightUpdateSchedule: chosen.weightUpdateSchedule,
    weightNames: request.weightNames,
    syntheticData: settings.syntheticData,
    syncPattern,
  });
  if (!hardware.memory.fits && !settings.allowOutOfMemory) throw new OutOfMemoryError(hardware.memory, request.microBatchSize, request.modelName);
  steps.step();
  const executable: Executable = {
    kind: request.kind,
    modelName: request.modelName,
    graph,
    inputSignature: request.inputSignature,
    microBatchSize: request.microBatchSize,
    factors,
    outputMode: execution.outputMode,
    outputReturnPeriod: execution.outputReturnPeriod,
    reduction: execution.reduction,
    outputCount: inferred.roles.outputs.length,
    singleOutput: inferred.roles.outputs.length === 1,
    placement,
    schedule,
    streamingTransfers: transfers,
    hardware,
    firedPatterns: nameRecord(fired),
    replicaGroupings: nameRecord(Object.entries(request.replicaGroupings)),
    broadcastBuffers: settings.broadcastBuffers,
    numerics: {
      stochasticRounding: precision.stochasticRounding,
      floatingPointExceptions: precision.floatingPointExceptions,
      halfPartials: precision.partialsType === 'half',
      halfFloatCasting: precision.halfFloatCasting,
      automaticLossScaling: training && settings.training.automaticLossScaling,
    },
    ...(settings.syntheticData ? { syntheticData: true } : {}),
    ...(syncPattern !== 'Full' ? { syncPattern } : {}),
    ...(anchors.length > 0 ? { anchors } : {}),
    programs: executablePrograms(programs ?? modelPrograms(request.kind), request.kind, 'compileGraph programs'),
    ...(Object.keys(options).length > 0 ? { engineOptions: { ...options } } : {}),
    ...(remoteBuffers.length > 0 ? { remoteBuffers } : {}),
  };
  writeCompileOutputs(executable, engineOptions);
  writeCompileReports(executable, options);
  return executable;
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
