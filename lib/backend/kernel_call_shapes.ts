/**
 * What a kernel call is, as far as choosing a kernel's path goes: its
 * inputs' shapes and dtypes and its attributes, from a call's tensors or
 * from a graph node's values alike, so that a pattern (and the host memory
 * estimate) can ask a kernel what it will do with a node before it runs.
 */
import type * as tf from '@tensorflow/tfjs';

/** An input as a kernel's choice of path reads it. */
export interface ShapedInput {
  readonly shape: readonly number[];
  readonly dtype: tf.DataType;
}

/** A kernel call's named inputs (shapes and dtypes) and attributes. */
export interface KernelCallShapes {
  readonly inputs: Readonly<Record<string, ShapedInput | undefined>>;
  readonly attrs?: object;
}

/** The call a graph node makes: its inputs by name (none for a node without names) and its attributes, or `attrs` in their place. */
export function nodeCallShapes(
  node: { readonly inputNames: readonly string[] | null; readonly inputs: readonly number[]; readonly attrs: object },
  value: (id: number) => ShapedInput,
  attrs: object = node.attrs,
): KernelCallShapes {
  return { inputs: Object.fromEntries((node.inputNames ?? []).map((name, i) => [name, value(node.inputs[i]!)])), attrs };
}
