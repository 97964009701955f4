/**
 * Exported executables (`compileAndExport`, the executable cache): one file
 * holding the compiled executable, the parameters it expects, the options it
 * was compiled with, the optimizer, and with `exportModel` the model itself
 * (its traced forward pass and weights) and the device state to resume from.
 *
 * Files are written atomically and verified when read (see file_envelope.ts):
 * a truncated, altered or foreign file is refused with an error naming the
 * file and what failed.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph } from '../ir/graph.js';
import { readFileBytes } from '../common/regular_file.js';
import { writeFileAtomic } from './atomic_file.js';
import type { DeviceState } from '../executable/device_state.js';
import { deviceStateFromMessage, deviceStateMessage } from './device_state_message.js';
import type { Executable } from '../executable/executable.js';
import { executableFromMessage, executableMessage } from './executable_message.js';
import { decodeMessage, encodeMessage, Messages, type ExportedModelMessage } from '../proto/executable_proto.js';
import { decodeFileEnvelope, encodeFileEnvelope } from './file_envelope.js';
import { graphFromMessage, graphMessage } from '../proto/graph_message.js';
import { parseLossless, stringifyLossless } from '../proto/lossless_json.js';
import { optimizerConfigFromMessage, optimizerConfigMessage, type OptimizerConfig } from './optimizer_config.js';
import { describeParameter, parameterSpecMessages, parameterSpecsFromMessages, type ParameterSpec } from './parameter_spec.js';
import { tensorData, tensorMessage, type TensorData } from '../proto/tensor_bytes.js';

/** The model stored with an executable (`exportModel`). */
export interface ExportedModel {
  /** Shared by every export of the same tfjs model. */
  readonly modelId: string;
  /** How many of the forward graph's inputs the model takes. */
  readonly inputCount: number;
  /** The model's forward pass, as traced. */
  readonly forwardGraph: Graph;
  /** The host value of every parameter, by name. */
  readonly weights: ReadonlyMap<string, TensorData>;
}

/** What an executable file holds. */
export interface ExecutableFileContents {
  readonly executable: Executable;
  /** The parameters, in the order the trace met them. */
  readonly parameters: readonly ParameterSpec[];
  /** The options it was compiled with, as `Options.toJSON()` returned them. */
  readonly options: unknown;
  readonly optimizer?: OptimizerConfig;
  readonly model?: ExportedModel;
  /** The device state to resume from (without weights: they are in `model`). */
  readonly deviceState?: DeviceState<TensorData>;
  /** The tfjs backend it was compiled on. */
  readonly backend: string;
  /** When it was written (milliseconds since the Unix epoch). */
  readonly createdUnixMs: number;
}

function exportedModelMessage(model: ExportedModel): ExportedModelMessage {
  return {
    model_id: model.modelId,
    input_count: model.inputCount,
    forward_graph: graphMessage(model.forwardGraph),
    weights: [...model.weights].map(([name, t]) => ({ name, tensor: tensorMessage(t) })),
  };
}

/**
 * The exported model of a message, whose weights must be exactly the
 * parameters the file lists, each with its declared shape and dtype (checked
 * before the rebuilt model allocates them).
 */
function exportedModelFromMessage(m: ExportedModelMessage, parameters: readonly ParameterSpec[], where: string): ExportedModel {
  if (!m.forward_graph) throw new PoptfjsError(`${where}: the exported model has no forward graph`, { type: 'file' });
  const specs = new Map(parameters.map((p) => [p.name, p]));
  const weights = new Map<string, TensorData>();
  for (const w of m.weights) {
    if (!w.tensor) throw new PoptfjsError(`${where}: weight '${w.name}' of the exported model has no tensor`, { type: 'file' });
    const spec = specs.get(w.name);
    if (!spec) throw new PoptfjsError(`${where}: the exported model has a weight '${w.name}', which is not one of the file's parameters`, { type: 'file' });
    const data = tensorData(w.tensor, `${where} weight '${w.name}'`);
    if (data.dtype !== spec.dtype || data.shape.length !== spec.shape.length || data.shape.some((d, i) => d !== spec.shape[i])) {
      throw new PoptfjsError(`${where}: weight '${w.name}' of the exported model is ${data.dtype}[${data.shape.join(',')}], but the parameter is ${describeParameter(spec)}`, {
        type: 'file',
      });
    }
    weights.set(w.name, data);
  }
  const absent = parameters.find((p) => !weights.has(p.name));
  if (absent) throw new PoptfjsError(`${where}: the exported model has no weights for parameter '${absent.name}'`, { type: 'file' });
  return { modelId: m.model_id, inputCount: m.input_count, forwardGraph: graphFromMessage(m.forward_graph, `${where} (exported model)`), weights };
}

/**
 * Throws an error naming `where` unless every parameter value of `graph` is
 * a parameter of the file, of its dtype and shape (a weight split across
 * replica groups is the parameter's slice: its shape without the first,
 * stacking dimension), so that a file whose graph disagrees with its
 * parameters is refused when it is read, not when a kernel meets the real
 * weight at run time.
 */
function checkParameterValues(graph: Graph, parameters: readonly ParameterSpec[], groupings: Executable['replicaGroupings'], where: string): void {
  const specs = new Map(parameters.map((p) => [p.name, p]));
  for (const value of graph.values) {
    if (value.source.kind !== 'param') continue;
    const name = value.source.name;
    const spec = specs.get(name);
    if (!spec) throw new PoptfjsError(`${where}: value %${value.id} is parameter '${name}', which is not one of the file's parameters`, { type: 'file' });
    const shape = Object.hasOwn(groupings, name) ? spec.shape.slice(1) : spec.shape;
    if (value.dtype !== spec.dtype || value.shape.length !== shape.length || value.shape.some((d, i) => d !== shape[i])) {
      throw new PoptfjsError(
        `${where}: value %${value.id} of parameter '${name}' is ${value.dtype}[${value.shape.join(',')}], but the parameter is ${describeParameter(spec)}` +
          `${Object.hasOwn(groupings, name) ? ' (split across replica groups along its first dimension)' : ''}`,
        { type: 'file' },
      );
    }
  }
}

/** Throws an error naming `where` unless the exported model's forward graph takes the model inputs of the executable's signature. */
function checkForwardInputs(model: ExportedModel, signature: Executable['inputSignature'], where: string): void {
  const inputs = model.forwardGraph.inputs;
  if (inputs.length !== model.inputCount || model.inputCount > signature.length) {
    throw new PoptfjsError(
      `${where}: the exported model takes ${inputs.length} input(s) in its graph and ${model.inputCount} by its count, of the ${signature.length} the signature describes`,
      {
        type: 'file',
      },
    );
  }
  inputs.forEach((id, i) => {
    const value = model.forwardGraph.values[id]!;
    const s = signature[i]!;
    if (value.dtype !== s.dtype || value.shape.length !== s.shape.length || value.shape.some((d, k) => d !== s.shape[k])) {
      throw new PoptfjsError(`${where}: input ${i} is ${s.dtype}[${s.shape.join(',')}] in the signature, but ${value.dtype}[${value.shape.join(',')}] in the exported model`, {
        type: 'file',
      });
    }
  });
}

/** The bytes of an executable file, stamped with `version` (this poptfjs's unless given). */
export function encodeExecutableFile(contents: ExecutableFileContents, version?: string): Uint8Array {
  const payload = encodeMessage(Messages.ExecutableFile, {
    executable: executableMessage(contents.executable),
    parameters: parameterSpecMessages(contents.parameters),
    options_json: stringifyLossless(contents.options),
    ...(contents.optimizer ? { optimizer: optimizerConfigMessage(contents.optimizer) } : {}),
    ...(contents.model ? { model: exportedModelMessage(contents.model) } : {}),
    ...(contents.deviceState ? { device_state: deviceStateMessage(contents.deviceState) } : {}),
    backend: contents.backend,
    created_unix_ms: contents.createdUnixMs,
  });
  return encodeFileEnvelope('executable', payload, version);
}

/** What the bytes of the executable file `file` hold; an error naming the file and what failed otherwise. */
export function decodeExecutableFile(bytes: Uint8Array, file: string): ExecutableFileContents {
  return decodePayload(decodeFileEnvelope(bytes, file, 'executable').payload, file);
}

/** What the verified payload of the executable file `file` holds. */
function decodePayload(payload: Uint8Array, file: string): ExecutableFileContents {
  try {
    const m = decodeMessage(Messages.ExecutableFile, payload, file);
    if (!m.executable) throw new PoptfjsError(`${file}: the file holds no executable`, { type: 'file' });
    const parameters = parameterSpecsFromMessages(m.parameters, file);
    const executable = executableFromMessage(m.executable, file);
    const model = m.model ? exportedModelFromMessage(m.model, parameters, file) : undefined;
    checkParameterValues(executable.graph, parameters, executable.replicaGroupings, file);
    if (model) {
      checkParameterValues(model.forwardGraph, parameters, executable.replicaGroupings, `${file} (exported model)`);
      checkForwardInputs(model, executable.inputSignature, file);
    }
    return {
      executable,
      parameters,
      options: parseLossless(m.options_json, `${file} options`),
      ...(m.optimizer ? { optimizer: optimizerConfigFromMessage(m.optimizer, file) } : {}),
      ...(model ? { model } : {}),
      ...(m.device_state ? { deviceState: deviceStateFromMessage(m.device_state, file) } : {}),
      backend: m.backend,
      createdUnixMs: m.created_unix_ms,
    };
  } catch (error) {
    if (error instanceof PoptfjsError) throw error;
    throw new PoptfjsError(`${file}: the executable cannot be read (${error instanceof Error ? error.message : String(error)})`, {
      type: 'file',
      location: file,
      cause: error,
    });
  }
}

/** Writes an executable file atomically. */
export function writeExecutableFile(path: string, contents: ExecutableFileContents): void {
  writeFileAtomic(path, encodeExecutableFile(contents));
}

/** Reads and verifies an executable file. */
export function readExecutableFile(path: string): ExecutableFileContents {
  return decodeExecutableFile(readFileBytes(path), path);
}

/** An executable file's verified payload and what it holds. */
export interface DecodedExecutableFile {
  readonly payload: Uint8Array;
  readonly contents: ExecutableFileContents;
}

/**
 * Reads and verifies the executable file `path` as {@link readExecutableFile}
 * does; a payload byte for byte `previous`'s (the same file read before) is
 * not decoded again: what it holds is `previous.contents`.
 */
export function readExecutableFileAgain(path: string, previous: DecodedExecutableFile | undefined): DecodedExecutableFile {
  const { payload } = decodeFileEnvelope(readFileBytes(path), path, 'executable');
  if (previous && Buffer.compare(payload, previous.payload) === 0) return previous;
  return { payload, contents: decodePayload(payload, path) };
}
