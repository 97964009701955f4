/**
 * Checking the shapes a graph read from a file declares against its kernels:
 * each node whose kernel has a shape rule (see the shape-only backend's
 * `SHAPE_RULES`) must make outputs of the shapes and dtypes the rule gives
 * for its inputs, so that a file whose values disagree with their nodes is
 * refused when it is read, not deep in tfjs when it runs ("Operands could not
 * be broadcast together"). Nodes the rules cannot judge without values they
 * do not have (a shape read from a tensor computed at run time) and
 * control-flow nodes are left to run time.
 */
import type * as tf from '@tensorflow/tfjs';
import { KernelCall, type OutputSpec } from '../backend/shape_only/rules/kernel_shape_rule.js';
import { SHAPE_RULES } from '../backend/kernel_catalogue/kernel_catalogue.js';
import { ShapeOnlyError } from '../backend/shape_only/rules/shape_only_error.js';
import { PoptfjsError } from '../common/errors.js';
import type { Node, Value } from '../ir/graph.js';

function describeValue(info: { shape: readonly number[]; dtype: string }): string {
  return `${info.dtype}[${info.shape.join(',')}]`;
}

/** Throws an error naming `where`, the node and the values if a node's outputs are not what its kernel makes of its inputs. */
export function checkNodeShapes(values: readonly Value[], nodes: readonly Node[], where: string): void {
  const infos: tf.TensorInfo[] = values.map((v) => ({ dataId: {}, shape: [...v.shape], dtype: v.dtype }));
  const constants = new Map<object, tf.BackendValues>();
  values.forEach((v, i) => {
    if (v.source.kind === 'constant' && v.source.data !== null && !Array.isArray(v.source.data)) constants.set(infos[i]!.dataId, v.source.data);
  });
  const knownValues = (input: tf.TensorInfo) => constants.get(input.dataId);
  for (const node of nodes) {
    const rule = SHAPE_RULES.get(node.kernel);
    if (rule === undefined || node.bodies !== undefined) continue;
    const inputs = node.inputs.map((id) => infos[id]!);
    const named = node.inputNames === null ? inputs : Object.fromEntries(node.inputNames.map((name, k) => [name, inputs[k]!]));
    const at = () => `node #${node.id} (${node.kernel})`;
    let made: OutputSpec | OutputSpec[];
    try {
      made = rule(new KernelCall(node.kernel, named, node.attrs as tf.NamedAttrMap, knownValues));
    } catch (error) {
      if (error instanceof ShapeOnlyError) continue;
      const message = error instanceof Error ? error.message : String(error);
      throw new PoptfjsError(`${where}: ${at()} cannot take its inputs ${inputs.map(describeValue).join(', ') || '(none)'}: ${message}`, { type: 'file', cause: error });
    }
    const outputs = Array.isArray(made) ? made : [made];
    node.outputs.forEach((id, k) => {
      const expected = outputs[k];
      const value = values[id]!;
      if (expected === undefined) throw new PoptfjsError(`${where}: ${at()} has ${node.outputs.length} outputs, but its kernel makes ${outputs.length}`, { type: 'file' });
      if (expected.dtype !== value.dtype || expected.shape.length !== value.shape.length || expected.shape.some((d, i) => d !== value.shape[i])) {
        throw new PoptfjsError(
          `${where}: ${at()} output ${k} is declared ${describeValue(value)} (%${id}), but its kernel makes ${describeValue(expected)} of its inputs ${inputs.map(describeValue).join(', ')}`,
          { type: 'file' },
        );
      }
    });
  }
}
