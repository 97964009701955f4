/**
 * Writing ONNX models: the model as read (or as imported), with its
 * initializers replaced by given weight values (by default, an imported
 * model's current weights), serialized to bytes or written to a file, with
 * large tensors in an external data file beside it when asked or when the
 * model would not fit in protobuf's 2 GB.
 *
 * Files are written to a temporary name and renamed into place, so a failed
 * write never leaves a half-written model where a good one was.
 */
import { basename, dirname, join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { writeFileAtomic } from '../files/atomic_file.js';
import { hostTensorFromTf, type HostTensor } from './proto/host_tensor.js';
import type { OnnxModel } from './model_file.js';
import type { ImportedModel, NamedValues } from './model_import.js';
import { OnnxError } from './proto/onnx_errors.js';
import { DATA_LOCATION, encodeModelProto, type ModelProto, type TensorProto } from './proto/onnx_proto.js';
import { tensorFromProto, tensorToProto } from './proto/tensor_proto_data.js';

/** Weight values by initializer name. */
export type WeightValues = NamedValues<tf.Tensor | HostTensor>;

/** Options of {@link modelToBytes}. */
export interface ModelToBytesOptions {
  /** Values for initializers, by initializer name; they must keep their shapes. */
  weights?: WeightValues;
}

/** Where {@link writeModel} puts tensor data. */
export interface ExternalDataOptions {
  /** The data file's name, beside the model (default: the model file's name + `.data`). */
  location?: string;
  /** Tensors of at least this many bytes go to the data file (default 1024). */
  threshold?: number;
}

/** Options of {@link writeModel}. */
export interface WriteModelOptions extends ModelToBytesOptions {
  /**
   * `true` or options: large tensors go to an external data file; `false`:
   * everything in the model file. By default, tensors go to an external file
   * only when the model would otherwise exceed 1.5 GiB.
   */
  externalData?: boolean | ExternalDataOptions;
}

const AUTO_EXTERNAL_BYTES = 1.5 * 2 ** 30;

function isImported(source: OnnxModel | ImportedModel): source is ImportedModel {
  return 'graph' in source && 'variables' in source;
}

/** The current values of an imported model's weights, by initializer name. */
export function importedWeights(model: ImportedModel): Map<string, tf.Tensor> {
  return new Map([...model.parameterNames].map(([initializer, param]) => [initializer, model.variables.get(param)! as tf.Tensor]));
}

function weightEntries(weights: WeightValues | undefined): Map<string, tf.Tensor | HostTensor> {
  if (!weights) return new Map();
  return weights instanceof Map ? new Map(weights) : new Map(Object.entries(weights as Record<string, tf.Tensor | HostTensor>));
}

/** `model` with the given initializers replaced; the original is left as it was. */
export function modelWithWeights(model: OnnxModel, weights: WeightValues): OnnxModel {
  const graph = model.proto.graph!;
  const values = weightEntries(weights);
  const names = new Set(graph.initializer.map((t) => t.name ?? ''));
  const unknown = [...values.keys()].filter((name) => !names.has(name));
  if (unknown.length > 0) throw new OnnxError(`no initializer(s) named ${unknown.map((n) => `'${n}'`).join(', ')} in the model`);
  const initializer = graph.initializer.map((old) => {
    const value = values.get(old.name ?? '');
    if (!value) return old;
    const shape = [...value.shape];
    if (shape.length !== old.dims.length || shape.some((d, i) => d !== old.dims[i])) {
      throw new OnnxError(`weight '${old.name}' has shape [${shape.join(', ')}]; the initializer has shape [${old.dims.join(', ')}]`);
    }
    const type = old.data_type ?? 0;
    const host = value instanceof tf.Tensor ? hostTensorFromTf(value, type) : { ...value, elementType: type };
    const proto = tensorToProto(old.name ?? '', host);
    if (old.doc_string) proto.doc_string = old.doc_string;
    return proto;
  });
  return { proto: { ...model.proto, graph: { ...graph, initializer } } };
}

function withWeights(source: OnnxModel | ImportedModel, weights: WeightValues | undefined): OnnxModel {
  const values = isImported(source) ? new Map<string, tf.Tensor | HostTensor>(importedWeights(source)) : new Map<string, tf.Tensor | HostTensor>();
  for (const [name, value] of weightEntries(weights)) values.set(name, value);
  const model = isImported(source) ? source.model : source;
  return values.size > 0 ? modelWithWeights(model, values) : model;
}

/**
 * Serializes a model: an {@link OnnxModel}, or an imported model with its
 * current weights; `options.weights` replace initializers.
 */
export function modelToBytes(source: OnnxModel | ImportedModel, options: ModelToBytesOptions = {}): Uint8Array {
  return encodeModelProto(withWeights(source, options.weights).proto);
}

function rawBytes(tensor: TensorProto): number {
  return (
    tensor.raw_data?.length ??
    (tensor.float_data.length + tensor.int32_data.length) * 4 + (tensor.int64_data.length + tensor.double_data.length + tensor.uint64_data.length) * 8
  );
}

/** Writes `chunks` to `path` atomically (see `writeFileAtomic`); an error is an `OnnxError`. */
function writeAtomically(path: string, chunks: Iterable<Uint8Array>): void {
  try {
    writeFileAtomic(path, chunks);
  } catch (error) {
    throw new OnnxError((error as Error).message, { location: path, cause: error });
  }
}

/** The model with tensors of at least `threshold` bytes moved to `location`, and the data file's chunks. */
function externalize(proto: ModelProto, location: string, threshold: number): { proto: ModelProto; chunks: Uint8Array[] } {
  const chunks: Uint8Array[] = [];
  let offset = 0;
  const initializer = proto.graph!.initializer.map((tensor) => {
    if (rawBytes(tensor) < threshold) return tensor;
    const raw = tensor.raw_data ?? tensorToProto(tensor.name ?? '', tensorFromProto(tensor)).raw_data!;
    const moved: TensorProto = {
      ...tensor,
      float_data: [],
      int32_data: [],
      int64_data: [],
      double_data: [],
      uint64_data: [],
      data_location: DATA_LOCATION.EXTERNAL,
    };
    delete moved.raw_data;
    moved.external_data = [
      { key: 'location', value: location },
      { key: 'offset', value: String(offset) },
      { key: 'length', value: String(raw.length) },
    ];
    chunks.push(raw);
    offset += raw.length;
    return moved;
  });
  return { proto: { ...proto, graph: { ...proto.graph!, initializer } }, chunks };
}

/**
 * Writes a model file: an {@link OnnxModel}, or an imported model with its
 * current weights; `options.weights` replace initializers. See
 * {@link WriteModelOptions.externalData} for where tensor data goes.
 */
export function writeModel(path: string, source: OnnxModel | ImportedModel, options: WriteModelOptions = {}): void {
  const model = withWeights(source, options.weights);
  const total = model.proto.graph!.initializer.reduce((sum, t) => sum + rawBytes(t), 0);
  const external = options.externalData ?? (total > AUTO_EXTERNAL_BYTES ? {} : false);
  if (external === false) {
    writeAtomically(path, [encodeModelProto(model.proto)]);
    return;
  }
  const settings = external === true ? {} : external;
  const location = settings.location ?? `${basename(path)}.data`;
  if (location.includes('/') || location.includes('\\')) throw new OnnxError(`external data location '${location}' must be a file name beside the model`);
  const { proto, chunks } = externalize(model.proto, location, settings.threshold ?? 1024);
  writeAtomically(join(dirname(path), location), chunks);
  writeAtomically(path, [encodeModelProto(proto)]);
}
