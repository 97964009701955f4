/**
 * What `load()` restores from an executable file exported with its model:
 * the options (with only the run-time options editable), and the tfjs model
 * rebuilt from the traced forward pass with the exported weights.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { Options } from '../options/options.js';
import { RUNTIME_OPTION_KEYS } from '../options/options_settings.js';
import type { ExecutableFileContents, ExportedModel } from '../files/executable_file.js';
import { tensorFromData } from '../files/tensor_data_conversion.js';
import { adoptModelIdentity } from './model_identity.js';
import { reconstructModel, type ExecutableGraphLayer } from './model_reconstruction.js';

const log = getLogger('poptfjs');

/** Changes the options of an executable being loaded; only run-time options take effect. */
export type EditOptions = (options: Options) => void;

/**
 * The options an exported executable runs with: those it was compiled with,
 * no longer for an offline target (a `ConnectionType.Never` set by
 * `useOfflineIpuTarget` becomes `Always`), then `editOpts`, whose changes
 * to anything but the run-time options (`RUNTIME_OPTION_KEYS`) are ignored
 * with a warning.
 */
export function optionsOfExecutableFile(file: ExecutableFileContents, path: string, editOpts?: EditOptions): Options {
  const saved = { ...(file.options as Record<string, unknown>) };
  if (saved.offlineIpuVersion !== undefined) {
    delete saved.offlineIpuVersion;
    if (saved.connectionType === 'Never') saved.connectionType = 'Always';
  }
  const options = Options.fromJSON(saved);
  if (!editOpts) return options;
  const edited = options.clone();
  editOpts(edited);
  const before = options.toJSON() as unknown as Record<string, unknown>;
  const after = edited.toJSON() as unknown as Record<string, unknown>;
  const runtime: ReadonlySet<string> = new Set(RUNTIME_OPTION_KEYS);
  const merged: Record<string, unknown> = { ...before };
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
    if (runtime.has(key)) {
      if (after[key] === undefined) delete merged[key];
      else merged[key] = after[key];
    } else {
      log.warn(
        `load(${path}): editOpts changed '${key}', which is fixed when the executable is compiled; only run-time options (${RUNTIME_OPTION_KEYS.join(', ')}) apply, so the change is ignored`,
      );
    }
  }
  return Options.fromJSON(merged);
}

/** Layers of the models rebuilt in this process, by the id of the model they were exported from. */
const rebuiltLayers = new Map<string, WeakRef<ExecutableGraphLayer>>();

/** A rebuilt model and its variables by the file's parameter names. */
export interface RestoredModel {
  readonly model: tf.LayersModel;
  readonly variables: ReadonlyMap<string, tf.Variable>;
}

/**
 * The tfjs model of an executable file, rebuilt from its traced forward pass
 * and holding its exported weights. Models rebuilt from exports of the same
 * tfjs model share their weights (loading writes this file's weights).
 */
export function restoreExportedModel(file: ExecutableFileContents, exported: ExportedModel, path: string): RestoredModel {
  const { executable, parameters } = file;
  const signature = executable.inputSignature.slice(0, exported.inputCount);
  const shareWith = rebuiltLayers.get(exported.modelId)?.deref();
  const { model, layer } = reconstructModel(exported.forwardGraph, parameters, signature, executable.microBatchSize, executable.modelName, shareWith);
  rebuiltLayers.set(exported.modelId, new WeakRef(layer));
  adoptModelIdentity(model, exported.modelId);
  const variables = new Map<string, tf.Variable>();
  parameters.forEach((p, i) => {
    const weight = layer.parameters[i]!;
    const data = exported.weights.get(p.name);
    if (!data) throw new PoptfjsError(`${path}: the exported model has no weights for parameter '${p.name}'`, { type: 'file', location: path });
    const value = tensorFromData(data);
    weight.write(value);
    value.dispose();
    variables.set(p.name, weight.read() as tf.Variable);
  });
  return { model, variables };
}
