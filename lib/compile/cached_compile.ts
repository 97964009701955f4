/**
 * Compiling a graph through the executable cache of the process
 * (lib/files/executable_cache.ts): the request is keyed under canonical
 * parameter and layer names, and the executable found or compiled is renamed
 * back to the request's own names.
 */
import { createHash } from 'node:crypto';
import * as tf from '@tensorflow/tfjs';
import type { Options } from '../options/options.js';
import { executableCache, type ExecutableSource } from '../files/executable_cache.js';
import { optimizerConfig, renameOptimizerConfig } from '../files/optimizer_config.js';
import type { ParameterSpec } from '../files/parameter_spec.js';
import type { Executable } from '../executable/executable.js';
import { renameExecutableParameters, renameGraphLayers } from '../executable/parameter_renaming.js';
import { COMPILE_GRAPH_STEPS, type CompileProgress } from './compile_progress.js';
import { canonicalNames, executableCacheKey, type KeyNames } from './executable_cache_key.js';
import { compileGraph } from './graph_compiler.js';
import { writeCompileOutputs } from './compile_outputs.js';
import { environmentEngineOptions } from '../options/engine_options.js';
import { resolveModelGraph, type ModelGraph } from './model_graph.js';

/**
 * Compiles `model` (made with `options`) with `compileGraph` through the executable cache of
 * this process; `parameters` are the traced model's, stored with a cache
 * entry. Returns the executable and where it came from.
 *
 * Entries on disk name parameters and layers canonically (`param0`,
 * `layer0`, ... in graph order), so another instance of the same model, whose
 * layers and tf.Variables tfjs numbered differently (a second instance in
 * this process), hits the entry; the in-process memory cache only serves the
 * same model again. The executable returned uses the request's names and
 * model name. An executable found in the cache writes the files compiling
 * would have written (compile_outputs.ts).
 */
export async function compileWithCache(
  model: ModelGraph,
  progress: CompileProgress,
  options: Options,
  parameters: readonly ParameterSpec[],
): Promise<{ executable: Executable; source: ExecutableSource }> {
  const request = resolveModelGraph(model);
  const optionsData = options.toJSON();
  const canonical = canonicalNames(request.graph);
  const toKey: KeyNames = { param: (n) => canonical.params.get(n) ?? n, layer: (n) => canonical.layers.get(n) ?? n };
  const ownParams = new Map([...canonical.params].map(([own, name]) => [name, own]));
  const ownLayers = new Map([...canonical.layers].map(([own, name]) => [name, own]));
  const fromKey: KeyNames = { param: (n) => ownParams.get(n) ?? n, layer: (n) => ownLayers.get(n) ?? n };
  const disk = executableCacheKey(request, optionsData, toKey);
  // The same graph under its own names: the disk key and the names in graph order.
  const memory = createHash('sha256')
    .update(disk)
    .update(JSON.stringify([[...canonical.params.keys()], [...canonical.layers.keys()]]))
    .digest('hex');
  const keys = { memory, disk };
  const result = await executableCache.obtain(keys, request.settings.executableCachePath, () => ({
    executable: renamedExecutable(compileGraph(request, undefined, {}, progress), toKey),
    parameters: parameters.map((p) => ({ ...p, name: toKey.param(p.name) })),
    options: optionsData,
    ...(request.optimizer ? { optimizer: renameOptimizerConfig(optimizerConfig(request.optimizer), toKey.param) } : {}),
    backend: tf.getBackend(),
    createdUnixMs: Date.now(),
  }));
  const executable = { ...renamedExecutable(result.executable, fromKey), modelName: request.modelName };
  if (result.source !== 'compiled') {
    // What compiling would have written, the environment's engine options ask of the executable found.
    writeCompileOutputs(executable, environmentEngineOptions()?.options ?? {});
    for (let i = 0; i < COMPILE_GRAPH_STEPS.length; i++) progress.step();
  }
  return { executable, source: result.source };
}

/** `executable` with its parameters and layers renamed. */
function renamedExecutable(executable: Executable, names: KeyNames): Executable {
  const renamed = renameExecutableParameters(executable, names.param);
  return { ...renamed, graph: renameGraphLayers(renamed.graph, names.layer) };
}
