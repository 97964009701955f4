/**
 * `POPTFJS_EXPORT_PROTO_FILE` (or PopTorch's `POPTORCH_EXPORT_PROTO_FILE`):
 * compiling a wrapped model writes its compiled graph as an ONNX model to the
 * file the variable names, as PopTorch writes the model proto it compiles. A
 * path with an extension is the file; one without is a directory, in which
 * the file is `model.proto`. The directories are made as needed.
 *
 * The ONNX writer belongs to a later folder of the data path (lib/onnx), which
 * gives it to the executor with {@link setCompiledGraphWriter} when poptfjs
 * is loaded.
 */
import { mkdirSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import type * as tf from '@tensorflow/tfjs';
import { environmentSetting } from '../common/environment.js';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import type { Graph } from '../ir/graph.js';

const log = getLogger('poptfjs');

/** The variable naming the file, read as {@link environmentSetting} reads it (PopTorch's name when it is unset). */
export const EXPORT_PROTO_FILE_VARIABLE = 'POPTFJS_EXPORT_PROTO_FILE';

/** Writes a compiled graph (named `name`, with its weights by name) to a file. */
export type CompiledGraphWriter = (path: string, graph: Graph, name: string, weights: ReadonlyMap<string, tf.Tensor>) => void;

let writer: CompiledGraphWriter | undefined;

/** Sets the function that writes the compiled graph as an ONNX model. */
export function setCompiledGraphWriter(write: CompiledGraphWriter): void {
  writer = write;
}

/** The file the environment names for the compiled graph (a directory's `model.proto`), or undefined when unset. */
export function exportProtoFile(env: NodeJS.ProcessEnv = process.env): { variable: string; path: string } | undefined {
  const setting = environmentSetting(EXPORT_PROTO_FILE_VARIABLE, env);
  if (!setting) return undefined;
  const given = resolve(setting.value);
  return { variable: setting.variable, path: extname(given) === '' ? join(given, 'model.proto') : given };
}

/** Writes `graph` to the file the environment names, if it names one. */
export function exportCompiledGraphIfRequested(graph: Graph, name: string, weights: ReadonlyMap<string, tf.Tensor>): void {
  const file = exportProtoFile();
  if (!file) return;
  if (!writer) throw new PoptfjsError(`${file.variable}: no ONNX writer is loaded; import poptfjs (its index) rather than its executor module alone`, { type: 'executor' });
  log.info(`${file.variable} set: saving model prototype to ${file.path}`);
  try {
    mkdirSync(dirname(file.path), { recursive: true });
  } catch (error) {
    throw new PoptfjsError(`${file.variable}: cannot make the directory of ${file.path}: ${(error as Error).message}`, { type: 'executor', cause: error });
  }
  writer(file.path, graph, name, weights);
}
