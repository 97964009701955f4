/**
 * A model printed with its block annotations, as PopTorch's `module_repr`
 * (and the `repr` of a wrapped model) shows the `BeginBlock`s a module's
 * print otherwise hides: each layer of a layers model on a line of its own,
 * nested models indented, an annotated layer preceded by its
 * `BeginBlock(userId=..., ipuId=...)`.
 */
import * as tf from '@tensorflow/tfjs';
import { layerAnnotation } from './block_scope.js';
import { isLayersModel, type WrappableModel } from './model_function.js';

/** The settings of a layer worth a glance, as PyTorch's `extra_repr` gives them (`units=10, activation=relu`). */
const SHOWN_CONFIG = ['units', 'filters', 'kernelSize', 'strides', 'padding', 'poolSize', 'rate', 'activation', 'inputDim', 'outputDim', 'axis'];

function configText(layer: tf.layers.Layer): string {
  const config = layer.getConfig() as Record<string, unknown>;
  return SHOWN_CONFIG.filter((key) => config[key] !== undefined && config[key] !== null)
    .map((key) => `${key}=${Array.isArray(config[key]) ? `[${(config[key] as unknown[]).join(', ')}]` : String(config[key])}`)
    .join(', ');
}

function layerRepr(layer: tf.layers.Layer): string {
  const annotation = layerAnnotation(layer);
  const begin = annotation ? `BeginBlock(userId=${annotation.spec.userId ?? 'undefined'}, ipuId=${annotation.spec.ipuId ?? 'undefined'}) ` : '';
  const inner = (layer as unknown as { layers?: tf.layers.Layer[] }).layers;
  if (Array.isArray(inner)) {
    const lines = inner.map((child) => `(${child.name}): ${layerRepr(child)}`.split('\n').join('\n  '));
    return `${begin}${layer.getClassName()}(${lines.length > 0 ? `\n  ${lines.join('\n  ')}\n` : ''})`;
  }
  return `${begin}${layer.getClassName()}(${configText(layer)})`;
}

/**
 * `model` as text with the `BeginBlock` annotation of each of its layers
 * (PopTorch's `poptorch.module_repr`); a function model, whose blocks are in
 * its code, is its name.
 */
export function moduleRepr(model: WrappableModel | tf.layers.Layer): string {
  if (model instanceof tf.layers.Layer || isLayersModel(model)) return layerRepr(model as tf.layers.Layer);
  return `function ${model.name || '(anonymous)'}`;
}
