/**
 * A tfjs layers model's `model.json`, read and checked before tfjs builds
 * the model from it: a regular file of at most {@link MAX_MODEL_JSON_BYTES},
 * valid JSON, a topology that tfjs can build without looping or overflowing
 * its stack (layers_topology.ts), and a weights manifest whose files lie in
 * the model's folder, whose weights have tfjs's dtypes and shapes of
 * integers, and whose declared size is known (and later compared with the
 * files' sizes) before a byte of weights is read.
 */
import type * as tf from '@tensorflow/tfjs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { PoptfjsError } from '../common/errors.js';
import { readFileBytes } from '../common/regular_file.js';
import { checkClassNames, checkDepth, checkModel, MAX_DIMENSION, MAX_NAME_LENGTH, TopologyProblem } from './layers_topology.js';

/** The largest model.json read: it holds the topology only (the weights are in their own files), a few megabytes for the largest models. */
export const MAX_MODEL_JSON_BYTES = 64 * 2 ** 20;

/** The bytes of an element of each weight dtype poptfjs reads. */
const WEIGHT_BYTES: Readonly<Record<string, number>> = { float32: 4, int32: 4, bool: 1 };

/** The bytes of an element of each quantized weight dtype (tfjs's weight quantization). */
const QUANTIZED_BYTES: Readonly<Record<string, number>> = { uint8: 1, uint16: 2, float16: 2 };

/** A model.json and what its weights manifest declares. */
export interface LayersModelJson {
  /** The model.json, checked. */
  readonly json: tf.io.ModelJSON;
  /** The weights files, in the manifest's order, each inside the model's folder. */
  readonly weightFiles: readonly string[];
  /** The bytes of weights the manifest declares (what the weights files hold together). */
  readonly weightBytes: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

/** The bytes weight `spec` takes in the weights files. */
function weightBytes(spec: unknown, where: string): number {
  if (!isObject(spec)) throw new TopologyProblem(`${where} must be { name, shape, dtype }, got ${text(spec)}`);
  const name = spec.name;
  if (typeof name !== 'string' || name.length > MAX_NAME_LENGTH) throw new TopologyProblem(`${where} must have a name of at most ${MAX_NAME_LENGTH} characters`);
  const what = `weight '${name}'`;
  const shape = spec.shape;
  if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0 || d > MAX_DIMENSION)) {
    throw new TopologyProblem(`${what}: its shape must be a list of integers from 0 to ${MAX_DIMENSION}, got ${text(shape)}`);
  }
  const dtype = spec.dtype;
  if (typeof dtype !== 'string' || !Object.hasOwn(WEIGHT_BYTES, dtype)) {
    throw new TopologyProblem(`${what}: dtype ${text(dtype)} is not one poptfjs reads; expected ${Object.keys(WEIGHT_BYTES).join(', ')}`);
  }
  let bytes = WEIGHT_BYTES[dtype]!;
  if (spec.quantization !== undefined) {
    const quantized = isObject(spec.quantization) ? spec.quantization.dtype : undefined;
    if (typeof quantized !== 'string' || !Object.hasOwn(QUANTIZED_BYTES, quantized)) {
      throw new TopologyProblem(`${what}: its quantization dtype ${text(quantized)} is not one tfjs writes; expected ${Object.keys(QUANTIZED_BYTES).join(', ')}`);
    }
    bytes = QUANTIZED_BYTES[quantized]!;
  }
  for (const d of shape as number[]) bytes *= d;
  if (!Number.isSafeInteger(bytes)) throw new TopologyProblem(`${what}: its shape ${text(shape)} declares more bytes than any file holds`);
  return bytes;
}

/** The weights files of `manifest` (inside `dir`) and the bytes it declares. */
function checkManifest(manifest: unknown, dir: string): { weightFiles: string[]; weightBytes: number } {
  if (!Array.isArray(manifest)) throw new TopologyProblem(`weightsManifest must be a list of { paths, weights }, got ${text(manifest)}`);
  const folder = resolve(dir);
  const weightFiles: string[] = [];
  let total = 0;
  manifest.forEach((group, g) => {
    if (!isObject(group) || !Array.isArray(group.paths) || !Array.isArray(group.weights)) {
      throw new TopologyProblem(`weightsManifest[${g}] must be { paths, weights }, got ${text(group)}`);
    }
    for (const path of group.paths) {
      if (typeof path !== 'string' || path === '') throw new TopologyProblem(`weightsManifest[${g}].paths must hold file names, got ${text(path)}`);
      const file = resolve(folder, path);
      const inside = relative(folder, file);
      if (inside === '' || inside === '..' || inside.startsWith('../') || isAbsolute(inside)) {
        throw new TopologyProblem(`weights file '${path}' lies outside the model's folder ${folder}; a model's weights files are beside its model.json`);
      }
      weightFiles.push(file);
    }
    group.weights.forEach((spec, i) => {
      total += weightBytes(spec, `weightsManifest[${g}].weights[${i}]`);
    });
  });
  if (!Number.isSafeInteger(total)) throw new TopologyProblem('the weights manifest declares more bytes than any file holds');
  return { weightFiles, weightBytes: total };
}

/** Checks the parsed model.json `json` of the model in `dir`; throws a {@link TopologyProblem} saying what is wrong. */
function checkModelJson(json: unknown, dir: string): LayersModelJson {
  if (!isObject(json)) throw new TopologyProblem(`not a tfjs model.json: expected an object with modelTopology and weightsManifest, got ${text(json)}`);
  checkDepth(json, 'the file');
  if (json.format !== undefined && json.format !== 'layers-model') {
    throw new TopologyProblem(`its format is ${text(json.format)}; poptfjs reads tfjs layers models (format 'layers-model')`);
  }
  const topology = json.modelTopology;
  if (!isObject(topology)) throw new TopologyProblem(`modelTopology must be an object ({ class_name, config }), got ${text(topology)}`);
  checkModel(topology.model_config ?? topology);
  checkClassNames(topology, 'modelTopology');
  if (json.trainingConfig !== undefined && json.trainingConfig !== null) {
    if (!isObject(json.trainingConfig)) throw new TopologyProblem(`trainingConfig must be an object, got ${text(json.trainingConfig)}`);
    checkClassNames(json.trainingConfig, 'trainingConfig');
  }
  return { json: json as unknown as tf.io.ModelJSON, ...checkManifest(json.weightsManifest, dir) };
}

/**
 * Reads and checks the model.json `file`; an error names the file and what
 * is wrong with it.
 */
export function readLayersModelJson(file: string): LayersModelJson {
  const bytes = readFileBytes(file, { maxBytes: MAX_MODEL_JSON_BYTES, what: 'a model.json' });
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new PoptfjsError(`${file}: not valid JSON (${error instanceof Error ? error.message : String(error)}); the model file is corrupted`, {
      type: 'file',
      location: file,
      cause: error,
    });
  }
  try {
    return checkModelJson(json, dirname(file));
  } catch (error) {
    if (!(error instanceof TopologyProblem)) throw error;
    throw new PoptfjsError(`${file}: ${error.message}`, { type: 'file', location: file, cause: error });
  }
}
