/**
 * The key of the executable cache: a SHA-256 over everything that decides
 * what compiling produces. Any change in these misses the cache:
 *
 * - the traced IR, in its serialized form (every node, attribute,
 *   annotation, shape, parameter name and constant);
 * - the input signature (shapes and dtypes of one micro-batch) and the
 *   execution settings (batching, output mode, gradient reduction);
 * - the options that affect compilation (all but `RUNTIME_OPTION_KEYS`);
 * - the optimizer's type, constant attribute values, state slots and trained weights;
 * - the kind (training or inference), the model's name, the replica
 *   groupings and the float16 declarations;
 * - the device target (the resolved IPU spec) and the tfjs backend (patterns
 *   depend on it);
 * - the poptfjs version.
 */
import { createHash } from 'node:crypto';
import * as tf from '@tensorflow/tfjs';
import type { Optimizer } from '../../optim/optimizer.js';
import { targetSpec } from '../ipu/target_spec.js';
import { RUNTIME_OPTION_KEYS } from '../options/options_settings.js';
import { encodeMessage, Messages } from '../runtime/executable_proto.js';
import { graphMessage } from '../runtime/graph_message.js';
import { stringifyLossless } from '../runtime/lossless_json.js';
import { POPTFJS_VERSION } from '../runtime/poptfjs_version.js';
import type { GraphCompileRequest } from './graph_compiler.js';

/** The options that affect what is compiled: every option but the runtime ones. */
export function compileAffectingOptions(options: object): Record<string, unknown> {
  const runtime: ReadonlySet<string> = new Set(RUNTIME_OPTION_KEYS);
  return Object.fromEntries(Object.entries(options).filter(([key]) => !runtime.has(key)));
}

/** The optimizer's part of the key: its type, constant attribute values, state slots (they take device memory) and trained weights. */
function optimizerPart(optimizer: Optimizer | undefined): unknown {
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
    groupParams: settings.groupParams,
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

/** The cache key (64 hex digits) of compiling `request` with the options `options` (`Options.toJSON()`). */
export function executableCacheKey(request: GraphCompileRequest, options: object): string {
  const material = {
    version: POPTFJS_VERSION,
    kind: request.kind,
    modelName: request.modelName,
    inputSignature: request.inputSignature.map((s) => ({ shape: [...s.shape], dtype: s.dtype })),
    microBatchSize: request.microBatchSize,
    execution: request.execution,
    options: compileAffectingOptions(options),
    optimizer: optimizerPart(request.optimizer),
    replicaGroupings: request.replicaGroupings,
    float16: { params: [...(request.float16?.params ?? [])].sort(), inputs: [...(request.float16?.inputs ?? [])].sort((a, b) => a - b) },
    target: targetSpec(request.settings.ipuTarget),
    backend: tf.getBackend(),
  };
  return createHash('sha256')
    .update(stringifyLossless(canonical(material)))
    .update('\0')
    .update(encodeMessage(Messages.Graph, graphMessage(request.graph)))
    .digest('hex');
}
