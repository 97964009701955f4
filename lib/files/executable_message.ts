/**
 * A compiled {@link Executable} as a protobuf `Executable` message, and back:
 * the graph, the signature and batching, the placement, the schedule and its
 * streaming transfers, the fired patterns and the replica groupings; the
 * simulated hardware's analysis and the numerical behaviour (plain data,
 * stored as lossless JSON).
 */
import { PoptfjsError } from '../common/errors.js';
import type { HardwareAnalysis } from '../ipu/hardware_analysis.js';
import type { HostSyncPattern } from '../ipu/host_io.js';
import type { CommGroupType, Liveness, VariableRetrievalMode } from '../option_vocabulary/enums.js';
import type { Placement } from '../strategy/placement.js';
import type { Schedule } from '../strategy/schedule.js';
import type { StreamingTransfer } from '../ipu/streaming_transfers.js';
import type { BatchFactors } from '../executable/batch_plan.js';
import type { Executable, ExecutableAnchor, GradientReduction, NumericalBehaviour, RemoteBufferSpec, TensorSignature } from '../executable/executable.js';
import { paramValues, type Graph } from '../ir/graph.js';
import {
  ExecutableKind,
  PassMessage,
  type AnchorMessage,
  type BatchFactorsMessage,
  type ExecutableMessage,
  type PlacementMessage,
  type ScheduleMessage,
  type TensorSignatureMessage,
} from '../proto/executable_proto.js';
import { checkedDtype, checkedShape } from '../proto/declared_tensor.js';
import { graphFromMessage, graphMessage } from '../proto/graph_message.js';
import { ioStructureFromJson, ioStructureJson } from './io_structure_message.js';
import { parseLossless, stringifyLossless } from '../proto/lossless_json.js';
import { nameRecord } from '../common/name_record.js';
import type { ResolvedOutputMode } from '../executable/output_mode.js';
import { executablePrograms, modelPrograms } from '../executable/program.js';

function missing(where: string, what: string): PoptfjsError {
  return new PoptfjsError(`${where}: the executable has no ${what}`, { type: 'file' });
}

/** The `ExecutableKind` of an executable kind. */
export function kindMessage(kind: Executable['kind']): number {
  return kind === 'training' ? ExecutableKind.TRAINING : ExecutableKind.INFERENCE;
}

/** The executable kind of an `ExecutableKind`; `where` names the file in errors. */
export function kindFromMessage(kind: number, where: string): Executable['kind'] {
  if (kind === ExecutableKind.TRAINING) return 'training';
  if (kind === ExecutableKind.INFERENCE) return 'inference';
  throw new PoptfjsError(`${where}: unknown executable kind ${kind}`, { type: 'file' });
}

/** The `TensorSignature` messages of a signature. */
export function signatureMessage(signature: readonly TensorSignature[]): TensorSignatureMessage[] {
  return signature.map((s) => ({ shape: [...s.shape], dtype: s.dtype }));
}

/** A signature from its messages; `where` names the file in errors. */
export function signatureFromMessage(messages: readonly TensorSignatureMessage[], where: string): TensorSignature[] {
  return messages.map((s, i) => ({ shape: checkedShape(s.shape, `${where} input ${i}`), dtype: checkedDtype(s.dtype, `${where} input ${i}`) }));
}

/** The `BatchFactors` message of batch factors. */
export function factorsMessage(f: BatchFactors): BatchFactorsMessage {
  return {
    device_iterations: f.deviceIterations,
    replication_factor: f.replicationFactor,
    input_group_size: f.inputGroupSize,
    input_group_type: f.inputGroupType,
    gradient_accumulation: f.gradientAccumulation,
  };
}

/** Batch factors from their message; `where` names the file in errors. */
export function factorsFromMessage(f: BatchFactorsMessage | undefined, where: string): BatchFactors {
  if (!f) throw missing(where, 'batch factors');
  return {
    deviceIterations: f.device_iterations,
    replicationFactor: f.replication_factor,
    inputGroupSize: f.input_group_size,
    inputGroupType: f.input_group_type as CommGroupType,
    gradientAccumulation: f.gradient_accumulation,
  };
}

function placementMessage(p: Placement): PlacementMessage {
  return {
    strategy: p.strategy,
    stages: p.stages.map((s) => ({ index: s.index, stage_id: s.stageId, ipu: s.ipu, blocks: [...s.blocks], ...(s.phase !== undefined ? { phase: s.phase } : {}) })),
    units: p.units.map((u) => ({ pass: u.pass === 'forward' ? PassMessage.FORWARD : PassMessage.BACKWARD, stages: [...u.stages], ipus: [...u.ipus] })),
    node_units: [...p.nodeUnits],
    node_stages: [...p.nodeStages],
    ipus_per_replica: p.ipusPerReplica,
    ipus_reserved: p.ipusReserved,
    ...(p.phased
      ? { phased: { phases: p.phased.phases, separate_backward_phase: p.phased.separateBackwardPhase, liveness: p.phased.liveness, parallel: p.phased.parallel } }
      : {}),
  };
}

function placementFromMessage(p: PlacementMessage, nodeCount: number, where: string): Placement {
  if (p.node_units.length !== nodeCount || p.node_stages.length !== nodeCount) {
    throw new PoptfjsError(`${where}: the placement covers ${p.node_units.length} nodes, but the graph has ${nodeCount}`, { type: 'file' });
  }
  if (p.node_units.some((u) => u >= p.units.length) || p.node_stages.some((s) => s >= p.stages.length)) {
    throw new PoptfjsError(`${where}: the placement refers to a unit or stage it does not have`, { type: 'file' });
  }
  return {
    strategy: p.strategy as Placement['strategy'],
    stages: p.stages.map((s) => ({ index: s.index, stageId: s.stage_id, ipu: s.ipu, blocks: s.blocks, ...(s.phase !== undefined ? { phase: s.phase } : {}) })),
    units: p.units.map((u) => ({ pass: u.pass === PassMessage.FORWARD ? 'forward' : 'backward', stages: u.stages, ipus: u.ipus })),
    nodeUnits: p.node_units,
    nodeStages: p.node_stages,
    ipusPerReplica: p.ipus_per_replica,
    ipusReserved: p.ipus_reserved,
    ...(p.phased
      ? { phased: { phases: p.phased.phases, separateBackwardPhase: p.phased.separate_backward_phase, liveness: p.phased.liveness as Liveness, parallel: p.phased.parallel } }
      : {}),
  };
}

function scheduleMessage(s: Schedule): ScheduleMessage {
  return {
    strategy: s.strategy,
    micro_batches: s.microBatches,
    ...(s.pipelineStages ? { pipeline_stages: { stages: s.pipelineStages.map((units) => ({ units: [...units] })) } } : {}),
    steps: s.steps.map((step) => ({
      work: step.work.map((w) => ({ unit: w.unit, micro_batch: w.microBatch })),
      ...(step.ramp !== undefined ? { ramp: step.ramp } : {}),
      ...(step.phase !== undefined ? { phase: step.phase } : {}),
    })),
  };
}

function scheduleFromMessage(s: ScheduleMessage, unitCount: number, where: string): Schedule {
  for (const step of s.steps) {
    for (const w of step.work) {
      if (w.unit >= unitCount || w.micro_batch >= s.micro_batches) {
        throw new PoptfjsError(`${where}: the schedule runs unit ${w.unit} on micro-batch ${w.micro_batch}, which do not exist`, { type: 'file' });
      }
    }
  }
  return {
    strategy: s.strategy as Schedule['strategy'],
    microBatches: s.micro_batches,
    ...(s.pipeline_stages ? { pipelineStages: s.pipeline_stages.stages.map((u) => u.units) } : {}),
    steps: s.steps.map((step) => ({
      work: step.work.map((w) => ({ unit: w.unit, microBatch: w.micro_batch })),
      ...(step.ramp !== undefined ? { ramp: step.ramp as 'up' | 'steady' | 'down' } : {}),
      ...(step.phase !== undefined ? { phase: step.phase } : {}),
    })),
  };
}

/** The `Executable` message of an executable. */
export function executableMessage(e: Executable): ExecutableMessage {
  return {
    kind: kindMessage(e.kind),
    model_name: e.modelName,
    graph: graphMessage(e.graph),
    input_signature: signatureMessage(e.inputSignature),
    micro_batch_size: e.microBatchSize,
    factors: factorsMessage(e.factors),
    output_mode: e.outputMode,
    output_return_period: e.outputReturnPeriod,
    reduction: { type: e.reduction.type, strategy: e.reduction.strategy },
    output_count: e.outputCount,
    single_output: e.singleOutput,
    ...(e.ioStructure ? { io_structure_json: ioStructureJson(e.ioStructure) } : {}),
    placement: placementMessage(e.placement),
    schedule: scheduleMessage(e.schedule),
    streaming_transfers: e.streamingTransfers.map((t) => ({
      step: t.step,
      when: t.when,
      ipu: t.ipu,
      direction: t.direction,
      kind: t.kind,
      bytes: t.bytes,
      overlaps_compute: t.overlapsCompute,
    })),
    fired_patterns: Object.entries(e.firedPatterns).map(([pattern, count]) => ({ pattern, count })),
    replica_groupings: Object.entries(e.replicaGroupings).map(([param, g]) => ({ param, type: g.type, group_size: g.groupSize, retrieval: g.retrieval })),
    broadcast_buffers: e.broadcastBuffers,
    hardware_json: stringifyLossless(e.hardware),
    ...(e.numerics ? { numerics_json: stringifyLossless(e.numerics) } : {}),
    synthetic_data: e.syntheticData ?? false,
    anchors: (e.anchors ?? []).map((a) => ({ name: a.name, long_name: a.longName, output_mode: a.outputMode, output_return_period: a.outputReturnPeriod })),
    ...(e.syncPattern ? { sync_pattern: e.syncPattern } : {}),
    programs: samePrograms(
      e.programs.map((p) => p.name),
      modelPrograms(e.kind),
    )
      ? []
      : e.programs.map((p) => p.name),
    ...(e.engineOptions ? { engine_options_json: JSON.stringify(e.engineOptions) } : {}),
    ...(e.remoteBuffers ? { remote_buffers_json: JSON.stringify(e.remoteBuffers) } : {}),
  };
}

function samePrograms(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

/** The remote buffers of a message: a JSON array of buffers of the graph's parameters. */
function remoteBuffersFromJson(json: string, graph: Graph, where: string): RemoteBufferSpec[] {
  const params = paramValues(graph);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (cause) {
    throw new PoptfjsError(`${where}: the executable's remote buffers are not valid JSON (${(cause as Error).message})`, { type: 'file', cause });
  }
  const valid = (b: Partial<RemoteBufferSpec>) =>
    typeof b.handle === 'string' &&
    (b.kind === 'weight' || (b.kind === 'optimizerState' && typeof b.slot === 'string')) &&
    typeof b.param === 'string' &&
    params.has(b.param) &&
    typeof b.sharded === 'boolean';
  if (!Array.isArray(parsed) || !parsed.every((b) => typeof b === 'object' && b !== null && valid(b as Partial<RemoteBufferSpec>))) {
    throw new PoptfjsError(`${where}: the executable's remote buffers are not buffers of its parameters`, { type: 'file' });
  }
  return parsed as RemoteBufferSpec[];
}

/** The engine options of a message: a JSON object of strings. */
function engineOptionsFromJson(json: string, where: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (cause) {
    throw new PoptfjsError(`${where}: the executable's engine options are not valid JSON (${(cause as Error).message})`, { type: 'file', cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
    throw new PoptfjsError(`${where}: the executable's engine options are not an object of strings`, { type: 'file' });
  }
  return parsed as Record<string, string>;
}

/** An executable from its message, checked for consistency; `where` names the file in errors. */
export function executableFromMessage(m: ExecutableMessage, where: string): Executable {
  if (!m.graph) throw missing(where, 'graph');
  if (!m.placement) throw missing(where, 'placement');
  if (!m.schedule) throw missing(where, 'schedule');
  if (!m.reduction) throw missing(where, 'gradient reduction');
  const graph = graphFromMessage(m.graph, where);
  const placement = placementFromMessage(m.placement, graph.nodes.length, where);
  const inputSignature = signatureFromMessage(m.input_signature, where);
  const kind = kindFromMessage(m.kind, where);
  const expectedInputs = inputSignature.length + (kind === 'training' ? 1 : 0);
  if (graph.inputs.length !== expectedInputs) {
    throw new PoptfjsError(`${where}: the graph takes ${graph.inputs.length} inputs, but the signature describes ${inputSignature.length}`, { type: 'file' });
  }
  inputSignature.forEach((s, i) => {
    const value = graph.values[graph.inputs[i]!]!;
    if (value.dtype !== s.dtype || value.shape.length !== s.shape.length || value.shape.some((d, k) => d !== s.shape[k])) {
      throw new PoptfjsError(`${where}: input ${i} is ${s.dtype}[${s.shape.join(',')}] in the signature, but ${value.dtype}[${value.shape.join(',')}] in the graph`, {
        type: 'file',
      });
    }
  });
  return {
    kind,
    modelName: m.model_name,
    graph,
    inputSignature,
    microBatchSize: m.micro_batch_size,
    factors: factorsFromMessage(m.factors, where),
    outputMode: m.output_mode as ResolvedOutputMode,
    outputReturnPeriod: m.output_return_period,
    reduction: { type: m.reduction.type, strategy: m.reduction.strategy } as GradientReduction,
    outputCount: m.output_count,
    singleOutput: m.single_output,
    ...(m.io_structure_json !== undefined ? { ioStructure: ioStructureFromJson(m.io_structure_json, inputSignature.length, m.output_count, where) } : {}),
    placement,
    schedule: scheduleFromMessage(m.schedule, placement.units.length, where),
    streamingTransfers: m.streaming_transfers.map(
      (t): StreamingTransfer => ({
        step: t.step,
        when: t.when as StreamingTransfer['when'],
        ipu: t.ipu,
        direction: t.direction as StreamingTransfer['direction'],
        kind: t.kind as StreamingTransfer['kind'],
        bytes: t.bytes,
        overlapsCompute: t.overlaps_compute,
      }),
    ),
    firedPatterns: nameRecord(m.fired_patterns.map((p) => [p.pattern, p.count])),
    replicaGroupings: nameRecord(
      m.replica_groupings.map((g) => [g.param, { type: g.type as CommGroupType, groupSize: g.group_size, retrieval: g.retrieval as VariableRetrievalMode }]),
    ),
    hardware: hardwareFromJson(m.hardware_json, where),
    broadcastBuffers: m.broadcast_buffers,
    ...(m.numerics_json !== undefined ? { numerics: parseLossless(m.numerics_json, `${where} numerics`) as NumericalBehaviour } : {}),
    ...(m.synthetic_data ? { syntheticData: true } : {}),
    ...(m.anchors.length > 0 ? { anchors: anchorsFromMessage(m.anchors, graph.roles.outputs.length - m.output_count, where) } : {}),
    ...(m.sync_pattern !== undefined ? { syncPattern: syncPatternFromMessage(m.sync_pattern, where) } : {}),
    programs: executablePrograms(m.programs.length > 0 ? m.programs : modelPrograms(kind), kind, `${where} programs`),
    ...(m.engine_options_json !== undefined ? { engineOptions: engineOptionsFromJson(m.engine_options_json, where) } : {}),
    ...(m.remote_buffers_json !== undefined ? { remoteBuffers: remoteBuffersFromJson(m.remote_buffers_json, graph, where) } : {}),
  };
}

/** The sync pattern of a message: `SinglePipeline` (`Full` is written as absence). */
function syncPatternFromMessage(pattern: string, where: string): HostSyncPattern {
  if (pattern !== 'SinglePipeline') throw new PoptfjsError(`${where}: the executable has sync pattern '${pattern}'; expected SinglePipeline or none (Full)`, { type: 'file' });
  return pattern;
}

function anchorsFromMessage(anchors: readonly AnchorMessage[], anchoredOutputs: number, where: string): ExecutableAnchor[] {
  if (anchors.length !== anchoredOutputs) {
    throw new PoptfjsError(`${where}: the executable has ${anchors.length} anchor(s) but its graph returns ${anchoredOutputs} value(s) besides the model's outputs`, {
      type: 'file',
    });
  }
  return anchors.map((a) => {
    if (!['All', 'Final', 'Sum', 'EveryN'].includes(a.output_mode) || a.output_return_period < 1) {
      throw new PoptfjsError(`${where}: anchor '${a.name}' has output mode '${a.output_mode}' with period ${a.output_return_period}`, { type: 'file' });
    }
    return { name: a.name, longName: a.long_name, outputMode: a.output_mode as ResolvedOutputMode, outputReturnPeriod: a.output_return_period };
  });
}

function hardwareFromJson(text: string, where: string): HardwareAnalysis {
  const hardware = parseLossless(text, `${where} hardware analysis`) as HardwareAnalysis | null;
  if (hardware === null || typeof hardware !== 'object' || !hardware.memory || !hardware.timeline || !hardware.spec) throw missing(where, 'hardware analysis');
  return hardware;
}
