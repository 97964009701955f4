/**
 * The key of the executable cache: a SHA-256 over everything that decides
 * what compiling produces. Any change in these misses the cache:
 *
 * - the traced IR, in its serialized form (every node, attribute,
 *   annotation but the source location, shape and constant; parameters and layers by the names
 *   `names` gives them, so another instance of the same model, whose layers
 *   and tf.Variables tfjs numbered differently, can have the same key);
 * - the input signature (shapes and dtypes of one micro-batch) and the
 *   execution settings (batching, output mode, gradient reduction);
 * - the options that affect compilation (all but `RUNTIME_OPTION_KEYS`),
 *   and the engine options of the environment (`POPLAR_ENGINE_OPTIONS`)
 *   that change what `compileGraph` produces (`debug.allowOutOfMemory`,
 *   `prng.enableStochasticRounding`, ...: `compileEngineOptions`);
 * - the optimizer's type, constant attribute values, state slots and trained weights;
 * - the kind (training or inference), the replica groupings and the
 *   float16 declarations (or that the graph flags its float16 values);
 * - the device target (the resolved IPU spec) and the tfjs backend (patterns
 *   depend on it);
 * - the poptfjs version.
 */
import { createHash } from 'node:crypto';
import * as tf from '@tensorflow/tfjs';
import type { Optimizer } from '../../optim/optimizer.js';
import type { Graph } from '../ir/graph.js';
import { targetSpec } from '../ipu/target_spec.js';
import { RUNTIME_OPTION_KEYS } from '../options/options_settings.js';
import { compileEngineOptions, environmentEngineOptions } from '../options/engine_options.js';
import { encodeMessage, Messages } from '../proto/executable_proto.js';
import { graphMessage } from '../proto/graph_message.js';
import { stringifyLossless } from '../proto/lossless_json.js';
import { renameGraphLayers, renameGraphParameters } from '../executable/parameter_renaming.js';
import { POPTFJS_VERSION } from '../files/poptfjs_version.js';
import type { ResolvedModelGraph } from './model_graph.js';
import { withoutSourceLocations } from '../trace/source_location.js';

/** The options that affect what is compiled: every option but the runtime ones. */
export function compileAffectingOptions(options: object): Record<string, unknown> {
  const runtime: ReadonlySet<string> = new Set(RUNTIME_OPTION_KEYS);
  return Object.fromEntries(Object.entries(options).filter(([key]) => !runtime.has(key)));
}

/** The optimizer's part of the key: its type, constant attribute values, state slots (they take device memory) and trained weights. */
function optimizerPart(optimizer: Optimizer | undefined, rename: (name: string) => string): unknown {
  if (!optimizer) return null;
  const settings = optimizer.settings();
  const variable = new Set(optimizer.variableAttrs.variableNames());
  const constants = (values: Readonly<Record<string, unknown>>) => Object.fromEntries(Object.entries(values).filter(([key]) => !variable.has(key)));
  return {
    type: settings.type,
    global: constants(settings.global),
    groups: settings.groups.map(constants),
    variable: [...variable].sort(),
    slots: optimizer.stateSlots(),
    groupParams: settings.groupParams.map((names) => names.map(rename)),
  };
}

/** JSON with object keys sorted, so equal values give equal text. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  );
}

/** How a cache key names parameters and layers. */
export interface KeyNames {
  readonly param: (name: string) => string;
  readonly layer: (name: string) => string;
}

/** Names as they are. */
const OWN_NAMES: KeyNames = { param: (name) => name, layer: (name) => name };

/**
 * Names for the parameters and layers of `graph` that do not depend on how
 * tfjs numbered them: `param0`, `param1`, ... and `layer0`, `layer1`, ... in
 * graph order.
 */
export function canonicalNames(graph: Graph): { params: Map<string, string>; layers: Map<string, string> } {
  const params = new Map<string, string>();
  for (const v of graph.values) if (v.source.kind === 'param' && !params.has(v.source.name)) params.set(v.source.name, `param${params.size}`);
  const layers = new Map<string, string>();
  for (const n of graph.nodes) if (n.annotations.layer !== undefined && !layers.has(n.annotations.layer)) layers.set(n.annotations.layer, `layer${layers.size}`);
  return { params, layers };
}

/**
 * The cache key (64 hex digits) of compiling `request` with the options
 * `options` (`Options.toJSON()`) under the engine options of `env`, its
 * parameters and layers named by `names` (default: as they are).
 */
export function executableCacheKey(request: ResolvedModelGraph, options: object, names: KeyNames = OWN_NAMES, env: NodeJS.ProcessEnv = process.env): string {
  const rename = names.param;
  const engineOptions = compileEngineOptions(environmentEngineOptions(env)?.options ?? {});
  const material = {
    version: POPTFJS_VERSION,
    kind: request.kind,
    inputSignature: request.inputSignature.map((s) => ({ shape: [...s.shape], dtype: s.dtype })),
    microBatchSize: request.microBatchSize,
    execution: request.execution,
    options: compileAffectingOptions(options),
    ...(Object.keys(engineOptions).length > 0 ? { engineOptions } : {}),
    optimizer: optimizerPart(request.optimizer, rename),
    replicaGroupings: Object.fromEntries(Object.entries(request.replicaGroupings).map(([name, grouping]) => [rename(name), grouping])),
    float16: { params: [...(request.float16?.params ?? [])].map(rename).sort(), inputs: [...(request.float16?.inputs ?? [])].sort((a, b) => a - b) },
    ...(request.float16Flagged ? { float16Flagged: true } : {}),
    target: targetSpec(request.settings.ipuTarget),
    backend: tf.getBackend(),
  };
  return createHash('sha256')
    .update(stringifyLossless(canonical(material)))
    .update('\0')
    .update(encodeMessage(Messages.Graph, graphMessage(renameGraphLayers(renameGraphParameters(withoutSourceLocations(request.graph), rename), names.layer))))
    .digest('hex');
}
