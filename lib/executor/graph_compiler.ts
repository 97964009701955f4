/**
 * Compiling a traced (or imported) graph into an `Executable`: the execution
 * settings from the options, the IR patterns, the placement on stages and
 * IPUs, the schedule, the streaming transfers, and the hardware analysis
 * (memory and time), refusing a model that does not fit. Shared by the model
 * wrappers and the Session API.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { nameRecord } from '../common/name_record.js';
import type { Graph } from '../ir/graph.js';
import { applyPatterns, patternsFromSetting } from '../ir/patterns/patterns.js';
import { analyseHardware } from '../ipu/hardware_analysis.js';
import { hostSyncPattern } from '../ipu/host_io.js';
import { OutOfMemoryError } from '../ipu/out_of_memory_error.js';
import { targetSpec } from '../ipu/target_spec.js';
import { tensorStorage } from '../ipu/tensor_storage.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { checkBatchFactors, hostBatchSize, type BatchFactors } from '../runtime/batch_plan.js';
import type { Executable, GradientReduction, TensorSignature } from '../runtime/executable.js';
import { returnedMicroSteps, type ResolvedOutputMode } from '../runtime/output_collector.js';
import type { ReplicaGrouping } from '../runtime/replica_grouping.js';
import { placeGraph } from '../strategy/placement.js';
import { buildSchedule, periodicSchedule } from '../strategy/schedule.js';
import { streamingTransfers } from '../ipu/streaming_transfers.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { inferFloat16 } from '../precision/float16_inference.js';
import { anchorTensors } from './anchored_tensors.js';
import type { CompileProgress } from './compile_progress.js';

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

/** What {@link compileGraph} compiles. */
export interface GraphCompileRequest {
  readonly kind: 'training' | 'inference';
  readonly modelName: string;
  /** The graph as traced or imported (patterns are applied here). */
  readonly graph: Graph;
  readonly inputSignature: readonly TensorSignature[];
  readonly microBatchSize: number;
  readonly execution: ExecutionSettings;
  readonly settings: OptionsSettings;
  readonly optimizer: Optimizer | undefined;
  readonly replicaGroupings: Readonly<Record<string, ReplicaGrouping>>;
  readonly progress: CompileProgress;
  /** The parameters (by name) and inputs (by position) declared float16 (`half`). */
  readonly float16?: { readonly params: ReadonlySet<string>; readonly inputs: ReadonlySet<number> };
  /** The graph flags its float16 values itself (an imported ONNX model, whose tensors have element types): none are inferred. */
  readonly float16Flagged?: boolean;
  /** The name reports give each parameter, by parameter name (default: its own). */
  readonly weightNames?: ReadonlyMap<string, string>;
  /**
   * The executable is only simulated, never run (`plan()`): its schedule
   * lists enough micro-batches to hold every state of the schedule
   * ({@link periodicSchedule}), so compiling costs the same for any number
   * of micro-batches (default false: every micro-batch is listed, as a run
   * needs).
   */
  readonly simulatedOnly?: boolean;
}

/** Compiles a graph into an executable; an `OutOfMemoryError` if it does not fit (unless allowed). */
export function compileGraph(request: GraphCompileRequest): Executable {
  const { settings, execution, progress } = request;
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
  const { graph, anchors } = anchorTensors(inferred, settings.anchoredTensors, { ...execution, deviceIterations: factors.deviceIterations });
  progress.step();
  const placement = placeGraph(graph, {
    strategy: settings.executionStrategy.toJSON(),
    replicationFactor: factors.replicationFactor,
    autoRoundNumIPUs: settings.autoRoundNumIPUs,
  });
  progress.step();
  const schedule = (request.simulatedOnly ? periodicSchedule : buildSchedule)(placement, training, training ? factors.gradientAccumulation : factors.deviceIterations);
  const optimizer = request.optimizer;
  const trainedWeights = new Set(optimizer?.parameterNames ?? []);
  const storage = tensorStorage(settings.tensorLocations, factors.replicationFactor);
  const transfers = streamingTransfers(graph, placement, schedule, { storage, training, trainedWeights, gradientAccumulation: factors.gradientAccumulation });
  progress.step();
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
    ...(optimizer ? { accumulatorPrecision: optimizer.accumulatorPrecision(optimizer.settings()) } : {}),
    availableMemoryProportion: settings.availableMemoryProportion,
    halfPartials: precision.partialsType === 'half',
    storage,
    recomputation: settings.autoRecomputation,
    weightNames: request.weightNames,
    syntheticData: settings.syntheticData,
    syncPattern,
  });
  if (!hardware.memory.fits && !settings.allowOutOfMemory) throw new OutOfMemoryError(hardware.memory, request.microBatchSize, request.modelName);
  progress.step();
  return {
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
  };
}
