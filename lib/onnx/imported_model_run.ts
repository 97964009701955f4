/**
 * Running an imported ONNX model once, directly on the tfjs backend (no
 * simulated IPU, no compilation): a reference for tests and tools, and the
 * way the conformance runner checks the importer.
 */
import type * as tf from '@tensorflow/tfjs';
import { GraphInterpreter } from '../runtime/graph_interpreter.js';
import { RandomSource } from '../executable/random_source.js';
import type { ImportedModel, NamedValues } from './model_import.js';
import { OnnxError } from './proto/onnx_errors.js';

/**
 * Runs `model` on `inputs` (by ONNX input name) and returns its outputs by
 * ONNX name (graph outputs and extra outputs). The caller owns the returned
 * tensors. `seed` seeds random operators (Dropout in training mode).
 */
export function runImportedModel(model: ImportedModel, inputs: NamedValues<tf.Tensor>, seed = 0): Map<string, tf.Tensor> {
  const byName = inputs instanceof Map ? inputs : new Map(Object.entries(inputs as Record<string, tf.Tensor>));
  const missing = model.inputNames.filter((name) => !byName.has(name));
  if (missing.length > 0)
    throw new OnnxError(`missing input(s) ${missing.map((n) => `'${n}'`).join(', ')}; the model takes ${model.inputNames.map((n) => `'${n}'`).join(', ')}`);
  const interpreter = new GraphInterpreter(model.graph);
  try {
    const params = new Map<string, tf.Tensor>(model.variables);
    const values = interpreter.run({ inputs: model.inputNames.map((name) => byName.get(name)!), params, random: new RandomSource(seed) }, [
      ...new Set(model.graph.roles.outputs),
    ]);
    return new Map(model.outputNames.map((name, i) => [name, values.get(model.graph.roles.outputs[i]!)!]));
  } finally {
    interpreter.dispose();
  }
}
