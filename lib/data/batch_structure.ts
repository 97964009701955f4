/**
 * The structure of what a `DataLoader` reads and hands out: an array of
 * tensors (`[x, y]`) or an object of named tensors (`{ data, label }`, as a
 * PopTorch dataset of dicts gives `dict` batches). A dataset's columns, each
 * of its samples and each batch have the same structure; the loader works on
 * the list of component tensors and rebuilds the structure around them.
 */
import * as tf from '@tensorflow/tfjs';
import { describeValue } from '../option_vocabulary/argument_rules.js';

/** Tensors by name: a sample, batch or dataset of named components. */
export type NamedTensors = { [name: string]: tf.Tensor };

/** A batch a `DataLoader` yields (or a sample, with `batchSize: null`): one tensor per component, in an array or by name. */
export type DataLoaderBatch = tf.Tensor[] | NamedTensors;

/** One element of a `tf.data.Dataset`: a tensor, an array of tensors, or an object of named tensors. */
export type DataLoaderSample = tf.Tensor | tf.Tensor[] | NamedTensors;

/** How components are held: `size` tensors in an array, or tensors under `keys`. */
export type BatchStructure = { readonly kind: 'array'; readonly size: number } | { readonly kind: 'object'; readonly keys: readonly string[] };

/** A structure and its component tensors, in order. */
export interface Components {
  readonly structure: BatchStructure;
  readonly tensors: tf.Tensor[];
}

function describeStructure(structure: BatchStructure): string {
  return structure.kind === 'array' ? `an array of ${structure.size} tensors` : `an object of tensors with keys ${structure.keys.join(', ')}`;
}

function sameStructure(a: BatchStructure, b: BatchStructure): boolean {
  if (a.kind === 'array') return b.kind === 'array' && a.size === b.size;
  return b.kind === 'object' && a.keys.length === b.keys.length && a.keys.every((key) => b.keys.includes(key));
}

/**
 * The components of a dataset given as columns: an array of tensors or an
 * object of tensors (not yet checked to be tensors; `null` when `dataset` is
 * neither), each component named as messages name it (`dataset[1]`, `dataset.label`).
 */
export function datasetColumns(dataset: unknown): Array<{ name: string; value: unknown }> | null {
  if (Array.isArray(dataset)) return dataset.map((value, index) => ({ name: `dataset[${index}]`, value }));
  if (typeof dataset !== 'object' || dataset === null || dataset instanceof tf.Tensor || dataset instanceof tf.data.Dataset) return null;
  return Object.entries(dataset).map(([key, value]) => ({ name: `dataset.${key}`, value }));
}

/** The structure of a dataset given as columns (see {@link datasetColumns}). */
export function columnStructure(dataset: readonly tf.Tensor[] | NamedTensors): BatchStructure {
  return Array.isArray(dataset) ? { kind: 'array', size: dataset.length } : { kind: 'object', keys: Object.keys(dataset) };
}

/** The tensors of columns `dataset` in the order of `structure`. */
export function columnTensors(dataset: readonly tf.Tensor[] | NamedTensors, structure: BatchStructure): tf.Tensor[] {
  return structure.kind === 'array' ? [...(dataset as readonly tf.Tensor[])] : structure.keys.map((key) => (dataset as NamedTensors)[key]!);
}

/**
 * The components of one `tf.data` element, checked against the structure of
 * the first element (`expected`): a tensor is an array of one. Disposes the
 * element's tensors when it is refused.
 */
export function elementComponents(value: unknown, expected: BatchStructure | undefined): Components {
  let components: Components | undefined;
  if (value instanceof tf.Tensor) components = { structure: { kind: 'array', size: 1 }, tensors: [value] };
  else if (Array.isArray(value)) components = { structure: { kind: 'array', size: value.length }, tensors: value };
  else if (typeof value === 'object' && value !== null) {
    const keys = expected?.kind === 'object' && sameStructure(expected, { kind: 'object', keys: Object.keys(value) }) ? expected.keys : Object.keys(value);
    components = { structure: { kind: 'object', keys }, tensors: keys.map((key) => (value as Record<string, tf.Tensor>)[key]!) };
  }
  if (components === undefined || components.tensors.length === 0 || !components.tensors.every((item) => item instanceof tf.Tensor)) {
    tf.dispose(tf.tensor_util.getTensorsInContainer(value as tf.TensorContainer));
    throw new TypeError(`DataLoader: each dataset element must be a tensor, an array of tensors or an object of tensors, got ${describeValue(value)}`);
  }
  if (expected !== undefined && !sameStructure(expected, components.structure)) {
    tf.dispose(components.tensors);
    const what = expected.kind === 'array' && components.structure.kind === 'array' ? 'number of tensors' : 'structure';
    throw new RangeError(
      `DataLoader: every dataset element must have the same ${what}; the first was ${describeStructure(expected)}, a later one ${describeStructure(components.structure)}`,
    );
  }
  return components;
}

/** `tensors` (one per component, in order) in `structure`. */
export function rebuild(structure: BatchStructure, tensors: tf.Tensor[]): DataLoaderBatch {
  if (structure.kind === 'array') return tensors;
  return Object.fromEntries(structure.keys.map((key, index) => [key, tensors[index]!]));
}

/** The tensors of a batch (to dispose it). */
export function batchTensors(batch: DataLoaderBatch): tf.Tensor[] {
  return Array.isArray(batch) ? [...batch] : Object.values(batch);
}
