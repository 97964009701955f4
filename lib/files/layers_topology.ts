/**
 * The checks of a tfjs layers model's topology (the `modelTopology` of a
 * model.json) that must come before tfjs builds it: tfjs's `fromConfig`
 * trusts the file, and some files make it loop forever (a functional model
 * whose layers read each other in a cycle, a layer reading itself, a layer
 * reading a layer the model does not have or a call of it that never
 * happens), overflow the stack (a topology nested thousands of levels deep)
 * or build what no one asked for (a class name such as `constructor` found
 * on every object). Each problem is one sentence naming the layer, for the
 * caller to prefix with the file.
 *
 * What tfjs checks well itself (a Dense layer's units, a kernel larger than
 * its input, an unknown loss) is left to it; the caller names the file in
 * its error.
 */
import * as tf from '@tensorflow/tfjs';

/** The deepest nesting of objects and arrays read: tfjs's own model.json files nest a few dozen levels at most. */
export const MAX_TOPOLOGY_DEPTH = 100;

/** The longest layer or weight name read: longer names are no one's, and every report would print them. */
export const MAX_NAME_LENGTH = 1024;

/** The largest dimension of an input shape (tfjs indexes tensors with 32-bit integers). */
export const MAX_DIMENSION = 2 ** 31 - 1;

/** The classes of models nested as layers: each has one call of its own (its inputs to its outputs) before it is called. */
const MODEL_CLASSES = new Set(['Sequential', 'Model', 'Functional']);

/** tfjs's rule for the names of tensors, which the weights of a layer are named after (`<layer>/kernel`). */
const TENSOR_NAME = /^[A-Za-z0-9][-A-Za-z0-9._/]*$/;

/** The config keys that give a layer's input shape. */
const SHAPE_KEYS = ['batch_input_shape', 'batchInputShape', 'input_shape', 'inputShape'] as const;

/** The dtypes a layer's input may have. */
const INPUT_DTYPES = new Set(['float32', 'int32', 'bool']);

/** A problem found in the topology. */
export class TopologyProblem extends Error {}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

/** Throws if `value` nests objects and arrays deeper than {@link MAX_TOPOLOGY_DEPTH} (checked without recursion). */
export function checkDepth(value: unknown, what: string): void {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > MAX_TOPOLOGY_DEPTH) {
      throw new TopologyProblem(`${what} nests objects and arrays more than ${MAX_TOPOLOGY_DEPTH} levels deep; a tfjs model nests a few dozen at most`);
    }
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
}

/** Throws unless `name` is a name tfjs can give a layer's weights. */
export function checkName(name: unknown, what: string): string {
  if (typeof name !== 'string') throw new TopologyProblem(`${what} must be a string, got ${text(name)}`);
  if (name.length > MAX_NAME_LENGTH) throw new TopologyProblem(`${what} has ${name.length} characters; names have at most ${MAX_NAME_LENGTH}`);
  if (!TENSOR_NAME.test(name)) {
    throw new TopologyProblem(`${what} ${text(name)} is not a valid name: it must start with a letter or a digit and hold only letters, digits, '-', '.', '_' and '/'`);
  }
  return name;
}

/** Throws unless every `{class_name, config}` object in `value` names a class tfjs knows (a registered layer, initializer, optimizer, ...). */
export function checkClassNames(value: unknown, where: string): void {
  const known = tf.serialization.SerializationMap.getMap().classNameMap;
  const stack: Array<[unknown, string]> = [[value, where]];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (isObject(item) && 'class_name' in item && 'config' in item) {
      const name = item.class_name;
      if (typeof name !== 'string' || !Object.hasOwn(known, name)) {
        const layer = isObject(item.config) && typeof item.config.name === 'string' ? ` (layer '${item.config.name}')` : '';
        throw new TopologyProblem(
          `${path}${layer}: unknown class ${text(name)}; tfjs has no layer, initializer or optimizer of that name (a Python Lambda or custom layer must be written for tfjs and registered with tf.serialization.registerClass first)`,
        );
      }
    }
    if (Array.isArray(item)) item.forEach((child, i) => stack.push([child, `${path}[${i}]`]));
    else for (const [key, child] of Object.entries(item)) stack.push([child, `${path}.${key}`]);
  }
}

function checkShape(shape: unknown, key: string, layer: string): void {
  if (!Array.isArray(shape)) throw new TopologyProblem(`layer '${layer}': ${key} must be a list of dimensions, got ${text(shape)}`);
  shape.forEach((d, i) => {
    if (d === null) return;
    if (!Number.isInteger(d) || (d as number) < 1 || (d as number) > MAX_DIMENSION) {
      throw new TopologyProblem(`layer '${layer}': dimension ${i} of its ${key} ${text(shape)} is ${text(d)}; a dimension is null or an integer from 1 to ${MAX_DIMENSION}`);
    }
  });
}

/**
 * Checks one layer's entry: its class, name (unique among `names`; required
 * in a functional model, where calls name layers), input shape and dtype,
 * and the model or layer nested in it. Returns its name, if it has one.
 */
function checkLayer(entry: unknown, where: string, names: Set<string>, functional: boolean): string | undefined {
  // A Sequential model of tfjs's first format has its list of layers for a config.
  const listed = isObject(entry) && entry.class_name === 'Sequential' && Array.isArray(entry.config);
  if (!isObject(entry) || typeof entry.class_name !== 'string' || !(isObject(entry.config) || listed)) {
    throw new TopologyProblem(`${where} must be { class_name, config${functional ? ', name, inbound_nodes' : ''} }, got ${text(entry)}`);
  }
  const config: Json = listed ? {} : (entry.config as Json);
  const given = functional ? entry.name : config.name;
  const name = given === undefined && !functional ? undefined : checkName(given, `the name of ${where}`);
  if (functional && config.name !== undefined && config.name !== name) {
    throw new TopologyProblem(`layer '${name}' has the name ${text(config.name)} in its config; the two must be the same`);
  }
  if (name !== undefined) {
    if (names.has(name)) throw new TopologyProblem(`two layers are named '${name}'; the layers of a model have names of their own`);
    names.add(name);
  }
  const label = name ?? where;
  for (const key of SHAPE_KEYS) if (config[key] !== undefined && config[key] !== null) checkShape(config[key], key, label);
  for (const key of ['input_dim', 'inputDim']) {
    const dim = config[key];
    if (dim !== undefined && dim !== null && (!Number.isInteger(dim) || (dim as number) < 1 || (dim as number) > MAX_DIMENSION)) {
      throw new TopologyProblem(`layer '${label}': ${key} must be an integer from 1 to ${MAX_DIMENSION}, got ${text(dim)}`);
    }
  }
  if (entry.class_name === 'InputLayer' && config.dtype !== undefined && config.dtype !== null && !INPUT_DTYPES.has(config.dtype as string)) {
    throw new TopologyProblem(`layer '${label}': dtype ${text(config.dtype)} is not one tfjs models take; expected float32, int32 or bool`);
  }
  if (MODEL_CLASSES.has(entry.class_name)) checkModel(entry, `layer '${label}'`);
  if (isObject(config.layer)) checkLayer(config.layer, `the layer wrapped by '${label}'`, new Set(), false);
  return name;
}

/** A call of a layer in a functional model: the layer and the call of it it reads. */
interface Inbound {
  readonly layer: string;
  readonly node: number;
}

function inboundOf(item: unknown, layer: string): Inbound {
  if (!Array.isArray(item) || item.length < 3 || typeof item[0] !== 'string' || !Number.isInteger(item[1]) || item[1] < 0 || !Number.isInteger(item[2]) || item[2] < 0) {
    throw new TopologyProblem(`layer '${layer}': an inbound tensor must be [layer name, call index, output index, kwargs], got ${text(item)}`);
  }
  return { layer: item[0], node: item[1] };
}

/**
 * Replays how tfjs's `fromConfig` makes the calls of a functional model's
 * layers (each waits until every call it reads exists) and throws where it
 * would wait forever: a layer the model does not have, a call that never
 * happens, or layers that read each other in a cycle.
 */
function checkCalls(layers: ReadonlyArray<{ name: string; initialCalls: number; calls: Inbound[][] }>): Map<string, number> {
  const made = new Map(layers.map((l) => [l.name, l.initialCalls]));
  const possible = new Map(layers.map((l) => [l.name, l.initialCalls + l.calls.filter((c) => c.length > 0).length]));
  for (const layer of layers) {
    for (const call of layer.calls) {
      for (const inbound of call) {
        if (!made.has(inbound.layer)) throw new TopologyProblem(`layer '${layer.name}' reads layer '${inbound.layer}', which the model does not have`);
        const calls = possible.get(inbound.layer)!;
        if (inbound.node >= calls) {
          throw new TopologyProblem(`layer '${layer.name}' reads call ${inbound.node} of layer '${inbound.layer}', which is called ${calls} time(s) (calls count from 0)`);
        }
      }
    }
  }
  let pending = layers.map((l) => ({ name: l.name, calls: l.calls.filter((c) => c.length > 0) }));
  while (pending.some((l) => l.calls.length > 0)) {
    let progress = false;
    pending = pending.map((layer) => {
      const waiting: Inbound[][] = [];
      for (const call of layer.calls) {
        if (call.every((inbound) => inbound.node < made.get(inbound.layer)!)) {
          made.set(layer.name, made.get(layer.name)! + 1);
          progress = true;
        } else waiting.push(call);
      }
      return { name: layer.name, calls: waiting };
    });
    if (!progress) throw cycleProblem(pending, made);
  }
  return made;
}

/** The problem of layers that wait for each other: the cycle found by following, from the first of them, the call each waits for. */
function cycleProblem(pending: ReadonlyArray<{ name: string; calls: Inbound[][] }>, made: ReadonlyMap<string, number>): TopologyProblem {
  const waiting = new Map(pending.filter((l) => l.calls.length > 0).map((l) => [l.name, l.calls[0]!]));
  const path: string[] = [];
  let layer = waiting.keys().next().value!;
  while (!path.includes(layer)) {
    path.push(layer);
    const call = waiting.get(layer)!;
    layer = call.find((inbound) => inbound.node >= made.get(inbound.layer)!)!.layer;
  }
  const cycle = [...path.slice(path.indexOf(layer)), layer];
  if (cycle.length === 2) return new TopologyProblem(`layer '${layer}' reads its own output: no order computes it`);
  return new TopologyProblem(`layers ${cycle.map((name) => `'${name}'`).join(' → ')} read each other's outputs in a cycle: no order computes them`);
}

function checkEnds(list: unknown, key: string, calls: Map<string, number>): void {
  if (!Array.isArray(list) || list.length === 0) throw new TopologyProblem(`the model's ${key} must be a non-empty list of [layer name, call index, output index]`);
  for (const item of list) {
    if (!Array.isArray(item) || item.length < 3 || typeof item[0] !== 'string' || !Number.isInteger(item[1]) || !Number.isInteger(item[2]) || item[2] < 0) {
      throw new TopologyProblem(`the model's ${key} must be [layer name, call index, output index] each, got ${text(item)}`);
    }
    const made = calls.get(item[0]);
    if (made === undefined) throw new TopologyProblem(`the model's ${key} name layer '${item[0]}', which the model does not have`);
    if (item[1] < 0 || item[1] >= made) throw new TopologyProblem(`the model's ${key} name call ${item[1]} of layer '${item[0]}', which is called ${made} time(s)`);
  }
}

/** Checks a model's `{ class_name, config }`: a Sequential model's layers, or a functional model's layers, calls, inputs and outputs. */
export function checkModel(model: unknown, where = 'the model'): void {
  if (!isObject(model) || typeof model.class_name !== 'string') throw new TopologyProblem(`${where} must be { class_name, config }, got ${text(model)}`);
  if (!MODEL_CLASSES.has(model.class_name)) {
    throw new TopologyProblem(`${where} is a '${model.class_name}'; a tfjs layers model is a ${[...MODEL_CLASSES].join(', ')}`);
  }
  const config = model.config;
  const layers = model.class_name === 'Sequential' && Array.isArray(config) ? config : isObject(config) ? config.layers : undefined;
  if (!Array.isArray(layers)) throw new TopologyProblem(`${where} (${model.class_name}) has no list of layers in its config`);
  const names = new Set<string>();
  if (model.class_name === 'Sequential') {
    layers.forEach((layer, i) => checkLayer(layer, `layer ${i} of ${where}`, names, false));
    return;
  }
  const replayed = layers.map((entry, i) => {
    const name = checkLayer(entry, `layer ${i} of ${where}`, names, true)!;
    const inbound = (entry as Json).inbound_nodes ?? [];
    if (!Array.isArray(inbound)) throw new TopologyProblem(`layer '${name}': inbound_nodes must be a list of calls, got ${text(inbound)}`);
    const calls = inbound.map((call) => {
      if (!Array.isArray(call)) throw new TopologyProblem(`layer '${name}': each call in inbound_nodes must be a list of inbound tensors, got ${text(call)}`);
      return call.map((item) => inboundOf(item, name));
    });
    const className = (entry as Json).class_name as string;
    return { name, initialCalls: className === 'InputLayer' || MODEL_CLASSES.has(className) ? 1 : 0, calls };
  });
  const calls = checkCalls(replayed);
  const ends = config as Json;
  checkEnds(ends.input_layers, 'input_layers', calls);
  checkEnds(ends.output_layers, 'output_layers', calls);
}
