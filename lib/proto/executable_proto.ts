/**
 * The protobuf messages of poptfjs's files (lib/proto/executable.proto), as
 * plain objects.
 *
 * The schema is loaded with protobufjs from its generated JSON descriptor.
 * Decoded messages keep the .proto's field names; scalar fields are always
 * present (proto3 defaults filled in), repeated fields are arrays, `optional`
 * fields and unset `oneof` members are absent, and `bytes` fields are
 * `Uint8Array`s. The interfaces below mirror the messages field by field.
 */
import protobuf from 'protobufjs';
import { PoptfjsError } from '../common/errors.js';
import { EXECUTABLE_PROTO_DESCRIPTOR } from './generated/executable_proto_descriptor.js';

/** `ContentType`: what a file holds. */
export const ContentType = { CONTENT_TYPE_UNSPECIFIED: 0, EXECUTABLE: 1, CHECKPOINT: 2 } as const;
/** A {@link ContentType} value. */
export type ContentType = (typeof ContentType)[keyof typeof ContentType];

/** `ElementEncoding`: how a tensor's elements are laid out. */
export const ElementEncoding = { ELEMENT_ENCODING_UNSPECIFIED: 0, FLOAT32: 1, INT32: 2, UINT8: 3, STRING: 4 } as const;
/** An {@link ElementEncoding} value. */
export type ElementEncoding = (typeof ElementEncoding)[keyof typeof ElementEncoding];

/** `Pass`: forward or backward. */
export const PassMessage = { PASS_UNSPECIFIED: 0, FORWARD: 1, BACKWARD: 2 } as const;
/** A {@link PassMessage} value. */
export type PassMessage = (typeof PassMessage)[keyof typeof PassMessage];

/** `ExecutableKind`: training or inference. */
export const ExecutableKind = { EXECUTABLE_KIND_UNSPECIFIED: 0, TRAINING: 1, INFERENCE: 2 } as const;
/** An {@link ExecutableKind} value. */
export type ExecutableKind = (typeof ExecutableKind)[keyof typeof ExecutableKind];

/** `FileEnvelope`: the outer layer of every file. */
export interface FileEnvelopeMessage {
  poptfjs_version: string;
  content_type: number;
  payload: Uint8Array;
  sha256: Uint8Array;
}

/** `Tensor`. */
export interface TensorMessage {
  shape: number[];
  dtype: string;
  encoding: number;
  data: Uint8Array;
  strings: string[];
}

/** `NamedTensor`. */
export interface NamedTensorMessage {
  name: string;
  tensor?: TensorMessage;
}

/** `AttrValue`: one member set. */
export interface AttrValueMessage {
  null_value?: boolean;
  bool_value?: boolean;
  number_value?: number;
  string_value?: string;
  list_value?: { items: AttrValueMessage[] };
  map_value?: { entries: AttrEntryMessage[] };
}

/** `AttrEntry`. */
export interface AttrEntryMessage {
  key: string;
  value?: AttrValueMessage;
}

/** `Value`: one member of its `source` set. */
export interface ValueMessage {
  id: number;
  shape: number[];
  dtype: string;
  input?: { index: number; name: string };
  param?: { name: string; trainable: boolean };
  constant?: TensorMessage;
  node?: { node: number; output: number };
  precision?: string;
}

/** `NodeAnnotations`. */
export interface NodeAnnotationsMessage {
  layer?: string;
  pass: number;
  grad_of?: number;
  block?: string;
  ipu?: number;
  loss?: boolean;
  checkpoint?: boolean;
  scope?: string;
  available_memory_proportion?: number;
  partials_type?: string;
  multi_conv?: MultiConvMemberMessage;
  attributes: OpAttributeEntryMessage[];
  source?: string;
}

/** `OpAttributeEntry`. */
export interface OpAttributeEntryMessage {
  attribute: string;
  key: string;
  value: string;
}

/** `MultiConvMember`. */
export interface MultiConvMemberMessage {
  group: number;
  index: number;
  plan_type: string;
  per_conv_reserved_tiles: number;
  cycle_back_off?: number;
  dithering?: boolean;
}

/** `Node`. */
export interface NodeMessage {
  id: number;
  kernel: string;
  positional_inputs: boolean;
  input_names: string[];
  inputs: number[];
  attrs: AttrEntryMessage[];
  outputs: number[];
  annotations?: NodeAnnotationsMessage;
  /** The graphs a control-flow node runs (none for other nodes). */
  bodies: GraphMessage[];
}

/** `ParameterValue`. */
export interface ParameterValueMessage {
  param: string;
  value: number;
}

/** `GraphRoles`. */
export interface GraphRolesMessage {
  outputs: number[];
  loss?: number;
  gradients?: { entries: ParameterValueMessage[] };
  loss_scale?: number;
  host_overlap?: HostOverlapMarkMessage[];
}

/** `HostOverlapMark`. */
export interface HostOverlapMarkMessage {
  of: string;
  index: number;
  mode: string;
}

/** `Graph`. */
export interface GraphMessage {
  values: ValueMessage[];
  nodes: NodeMessage[];
  inputs: number[];
  roles?: GraphRolesMessage;
  assignments: ParameterValueMessage[];
}

/** `TensorSignature`. */
export interface TensorSignatureMessage {
  shape: number[];
  dtype: string;
}

/** `BatchFactors`. */
export interface BatchFactorsMessage {
  device_iterations: number;
  replication_factor: number;
  input_group_size: number;
  input_group_type: string;
  gradient_accumulation: number;
}

/** `Placement`. */
export interface PlacementMessage {
  strategy: string;
  stages: Array<{ index: number; stage_id: number; ipu: number; blocks: string[]; phase?: number }>;
  units: Array<{ pass: number; stages: number[]; ipus: number[] }>;
  node_units: number[];
  node_stages: number[];
  ipus_per_replica: number;
  ipus_reserved: number;
  phased?: { phases: number; separate_backward_phase: boolean; liveness: string; parallel: boolean };
}

/** `Schedule`. */
export interface ScheduleMessage {
  strategy: string;
  micro_batches: number;
  pipeline_stages?: { stages: Array<{ units: number[] }> };
  steps: Array<{ work: Array<{ unit: number; micro_batch: number }>; ramp?: string; phase?: number }>;
}

/** `StreamingTransfer`. */
export interface StreamingTransferMessage {
  step: number;
  when: string;
  ipu: number;
  direction: string;
  kind: string;
  bytes: number;
  overlaps_compute: boolean;
}

/** `Executable`. */
export interface ExecutableMessage {
  kind: number;
  model_name: string;
  graph?: GraphMessage;
  input_signature: TensorSignatureMessage[];
  micro_batch_size: number;
  factors?: BatchFactorsMessage;
  output_mode: string;
  output_return_period: number;
  reduction?: { type: string; strategy: string };
  output_count: number;
  single_output: boolean;
  io_structure_json?: string;
  placement?: PlacementMessage;
  schedule?: ScheduleMessage;
  streaming_transfers: StreamingTransferMessage[];
  fired_patterns: Array<{ pattern: string; count: number }>;
  replica_groupings: Array<{ param: string; type: string; group_size: number; retrieval: string }>;
  broadcast_buffers: boolean;
  hardware_json: string;
  numerics_json?: string;
  synthetic_data: boolean;
  anchors: AnchorMessage[];
  sync_pattern?: string;
  programs: string[];
  engine_options_json?: string;
  remote_buffers_json?: string;
}

/** `Anchor`. */
export interface AnchorMessage {
  name: string;
  long_name: string;
  output_mode: string;
  output_return_period: number;
}

/** `ParameterSpec`. */
export interface ParameterSpecMessage {
  name: string;
  shape: number[];
  dtype: string;
  trainable: boolean;
}

/** `OptimizerConfig`. */
export interface OptimizerConfigMessage {
  type: string;
  settings_json: string;
}

/** `ExportedModel`. */
export interface ExportedModelMessage {
  model_id: string;
  input_count: number;
  forward_graph?: GraphMessage;
  weights: NamedTensorMessage[];
}

/** `ExecutableGraphLayerConfig`. */
export interface ExecutableGraphLayerConfigMessage {
  forward_graph?: GraphMessage;
  micro_batch_size: number;
  parameters: ParameterSpecMessage[];
}

/** `ReplicaValues`. */
export interface ReplicaValuesMessage {
  param: string;
  values: TensorMessage[];
  replica_values: number[];
}

/** `OptimizerStateRecord`. */
export interface OptimizerStateRecordMessage {
  grouped_param?: string;
  replica_group: number;
  step: number;
  parameters: Array<{ param: string; slots: NamedTensorMessage[] }>;
}

/** `DeviceState`. */
export interface DeviceStateMessage {
  weights: ReplicaValuesMessage[];
  optimizer_states: OptimizerStateRecordMessage[];
  loss_scale: number;
  random_state: number[];
  iterations: number;
}

/** `ExecutableFile`. */
export interface ExecutableFileMessage {
  executable?: ExecutableMessage;
  parameters: ParameterSpecMessage[];
  options_json: string;
  optimizer?: OptimizerConfigMessage;
  model?: ExportedModelMessage;
  device_state?: DeviceStateMessage;
  backend: string;
  created_unix_ms: number;
}

/** `CheckpointFile`. */
export interface CheckpointFileMessage {
  model_name: string;
  kind: number;
  input_signature: TensorSignatureMessage[];
  micro_batch_size: number;
  factors?: BatchFactorsMessage;
  parameters: ParameterSpecMessage[];
  optimizer?: OptimizerConfigMessage;
  device_state?: DeviceStateMessage;
  backend: string;
  created_unix_ms: number;
}

const root = protobuf.Root.fromJSON(EXECUTABLE_PROTO_DESCRIPTOR);

/** A message type of the schema, with the TypeScript shape of its decoded objects. */
export interface MessageType<T> {
  readonly type: protobuf.Type;
  /** Never set: carries the decoded object type `T` for type inference. */
  readonly decoded?: T;
}

function messageType<T>(name: string): MessageType<T> {
  return { type: root.lookupType(`poptfjs.${name}`) };
}

/** The message types poptfjs reads and writes as whole buffers. */
export const Messages = {
  FileEnvelope: messageType<FileEnvelopeMessage>('FileEnvelope'),
  ExecutableFile: messageType<ExecutableFileMessage>('ExecutableFile'),
  CheckpointFile: messageType<CheckpointFileMessage>('CheckpointFile'),
  Graph: messageType<GraphMessage>('Graph'),
  ExecutableGraphLayerConfig: messageType<ExecutableGraphLayerConfigMessage>('ExecutableGraphLayerConfig'),
} as const;

/** Encodes a message object. */
export function encodeMessage<T>(message: MessageType<T>, value: T): Uint8Array {
  // The objects are typed as the messages (numbers, Uint8Arrays, arrays, nested objects), so they encode as they are.
  return message.type.encode(value as Record<string, unknown>).finish();
}

/** Decodes a message; `what` names the data in the error thrown for bytes that are not such a message. */
export function decodeMessage<T>(message: MessageType<T>, bytes: Uint8Array, what: string): T {
  const type = message.type;
  try {
    return type.toObject(type.decode(bytes), { defaults: true, arrays: true, longs: Number, enums: Number }) as T;
  } catch (error) {
    throw new PoptfjsError(`${what}: not a valid ${type.name} message (${error instanceof Error ? error.message : String(error)})`, {
      type: 'file',
      cause: error,
    });
  }
}
