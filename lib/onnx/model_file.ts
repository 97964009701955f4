/**
 * Reading ONNX models from files or bytes, with tensors kept in external data
 * files (`data_location: EXTERNAL`) loaded from beside the model. The model
 * message itself is limited to 2 GB by protobuf; larger models keep their
 * weights in external files, which are read one tensor at a time (by offset
 * and length), so their size is limited only by memory.
 */
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { readFileBytes, regularFileSize } from '../common/regular_file.js';
import { checkGraphConsistency } from './graph_consistency.js';
import { OnnxError } from './proto/onnx_errors.js';
import { DATA_LOCATION, decodeModelProto, type GraphProto, type ModelProto, type TensorProto } from './proto/onnx_proto.js';
import { checkTensorProto, declaredRawBytes } from './proto/tensor_proto_data.js';

/** A decoded ONNX model whose tensors all hold their data in the message. */
export interface OnnxModel {
  readonly proto: ModelProto;
  /** The file it was read from ({@link readModel}), which errors about the model name. */
  readonly path?: string;
}

/** Options of {@link readModel}. */
export interface ReadModelOptions {
  /**
   * Where external data files are, when the model is given as bytes (by
   * default, the model file's directory).
   */
  externalDataDirectory?: string;
}

/** Every tensor of a graph and its subgraphs: initializers and tensor attributes (Constant values, ...). */
export function* graphTensors(graph: GraphProto): Generator<TensorProto> {
  yield* graph.initializer;
  for (const node of graph.node) {
    for (const attribute of node.attribute) {
      if (attribute.t) yield attribute.t;
      yield* attribute.tensors;
      if (attribute.g) yield* graphTensors(attribute.g);
      for (const g of attribute.graphs) yield* graphTensors(g);
    }
  }
}

function externalEntry(tensor: TensorProto, key: string): string | undefined {
  return tensor.external_data.find((e) => e.key === key)?.value;
}

function nonNegativeInteger(text: string | undefined, what: string, tensor: TensorProto): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new OnnxError(`tensor '${tensor.name}': external data ${what} '${text}' is not a byte count`);
  return n;
}

/** Reads one tensor's external data into its `raw_data` (the message then holds its data). */
function loadExternalData(tensor: TensorProto, directory: string): void {
  const location = externalEntry(tensor, 'location');
  if (!location) throw new OnnxError(`tensor '${tensor.name}' is stored externally but has no external data location`);
  const relative = normalize(location);
  if (isAbsolute(relative) || relative === '..' || relative.startsWith(`..${sep}`)) {
    throw new OnnxError(`tensor '${tensor.name}': external data location '${location}' must be a path inside the model's directory`);
  }
  const file = join(directory, relative);
  let size: number;
  try {
    size = regularFileSize(file);
  } catch (error) {
    throw new OnnxError(`tensor '${tensor.name}': its external data: ${(error as Error).message}`, { cause: error });
  }
  const offset = nonNegativeInteger(externalEntry(tensor, 'offset'), 'offset', tensor) ?? 0;
  const length = nonNegativeInteger(externalEntry(tensor, 'length'), 'length', tensor) ?? size - offset;
  if (offset + length > size) {
    throw new OnnxError(`tensor '${tensor.name}': external data [${offset}, ${offset + length}) lies beyond the end of '${file}' (${size} bytes)`);
  }
  const declared = declaredRawBytes(tensor);
  if (length !== declared) {
    throw new OnnxError(`tensor '${tensor.name}': its shape [${tensor.dims.join(', ')}] needs ${declared} bytes, but its external data in '${file}' has ${length}`);
  }
  const data = new Uint8Array(length);
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    let done = 0;
    while (done < length) {
      const n = readSync(fd, data, done, length - done, offset + done);
      if (n === 0) throw new OnnxError(`tensor '${tensor.name}': '${file}' ended while reading its external data`);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  tensor.raw_data = data;
  tensor.external_data = [];
  delete tensor.data_location;
}

/**
 * Decodes a model from bytes. Tensors in external data files are loaded from
 * `options.externalDataDirectory`; without it, a model that has any is an error.
 * Every tensor's data is checked against its declared shape and element type
 * (external data before it is read), so a tensor declaring more than is
 * stored is refused before anything is allocated for it, and the graph's
 * consistency is checked (graph_consistency.ts).
 */
export function modelFromBytes(bytes: Uint8Array, options: ReadModelOptions = {}): OnnxModel {
  let proto: ModelProto;
  try {
    proto = decodeModelProto(bytes);
  } catch (error) {
    throw new OnnxError(`the bytes are not an ONNX model (a ModelProto): ${(error as Error).message}`, { cause: error });
  }
  if (!proto.graph) throw new OnnxError('the ONNX model has no graph');
  for (const tensor of graphTensors(proto.graph)) {
    if (tensor.data_location !== DATA_LOCATION.EXTERNAL) continue;
    if (options.externalDataDirectory === undefined) {
      throw new OnnxError(
        `tensor '${tensor.name}' keeps its data in the external file '${externalEntry(tensor, 'location')}'; ` +
          'read the model with readModel(path), or give externalDataDirectory',
      );
    }
    loadExternalData(tensor, options.externalDataDirectory);
  }
  for (const tensor of graphTensors(proto.graph)) checkTensorProto(tensor);
  checkGraphConsistency(proto.graph);
  return { proto };
}

/** Reads an ONNX model file, loading external data from the files beside it; errors name the file. */
export function readModel(path: string, options: ReadModelOptions = {}): OnnxModel {
  let bytes: Uint8Array;
  try {
    bytes = readFileBytes(path);
  } catch (error) {
    throw new OnnxError(`cannot read the ONNX model: ${(error as Error).message}`, { location: path, cause: error });
  }
  try {
    return { ...modelFromBytes(bytes, { externalDataDirectory: options.externalDataDirectory ?? dirname(path) }), path };
  } catch (error) {
    if (!(error instanceof OnnxError)) throw error;
    throw new OnnxError(`${path}: ${error.message}`, { location: path, cause: error });
  }
}
