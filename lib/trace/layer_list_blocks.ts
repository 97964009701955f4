/**
 * Where `BeginBlock` places the layers of a layers model: by the layer list
 * the user annotated, not by the order tfjs happens to run the layers in.
 *
 * The list is `model.layers` with the layers of each nested model right after
 * the nested model, depth first (`allLayers`). Each layer belongs to the
 * block of the nearest layer at or before it in that list that is annotated
 * with `BeginBlock`; layers before the first annotated one belong to no
 * block. On a branching model the two orders differ: tfjs lists an Inception
 * module's layers by depth but runs one branch after the other, so deciding
 * by execution order would put a later-listed convolution of one branch
 * into the block of an earlier-listed layer of another.
 */
import type * as tf from '@tensorflow/tfjs';

/**
 * For each layer of `layers` at or after the first annotated one, the
 * annotated layer whose block it belongs to (itself, when annotated).
 */
export function layerListBlockStarts(layers: readonly tf.layers.Layer[], isAnnotated: (layer: tf.layers.Layer) => boolean): Map<tf.layers.Layer, tf.layers.Layer> {
  const starts = new Map<tf.layers.Layer, tf.layers.Layer>();
  let start: tf.layers.Layer | undefined;
  for (const layer of layers) {
    if (isAnnotated(layer)) start = layer;
    if (start !== undefined) starts.set(layer, start);
  }
  return starts;
}
