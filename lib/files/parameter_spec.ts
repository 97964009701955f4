/**
 * The parameters of a compiled model as the host holds them: name, shape,
 * dtype and whether they are trained, in the order the trace first met them.
 * Files list them so an executable or checkpoint can be matched to a freshly
 * wrapped model, whose tf.Variable names differ (tfjs numbers them).
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import type { ParameterSpecMessage } from '../proto/executable_proto.js';
import { checkedDtype, checkedShape } from '../proto/declared_tensor.js';

/** One parameter of a compiled model. */
export interface ParameterSpec {
  readonly name: string;
  /** The host tf.Variable's shape (stacked slices for a weight split across replica groups). */
  readonly shape: readonly number[];
  readonly dtype: tf.DataType;
  readonly trainable: boolean;
}

/** The specs of traced variables, in the order given. */
export function parameterSpecs(variables: ReadonlyMap<string, tf.Variable>): ParameterSpec[] {
  return [...variables].map(([name, v]) => ({ name, shape: [...v.shape], dtype: v.dtype, trainable: v.trainable }));
}

/** The `ParameterSpec` messages of parameter specs. */
export function parameterSpecMessages(specs: readonly ParameterSpec[]): ParameterSpecMessage[] {
  return specs.map((p) => ({ name: p.name, shape: [...p.shape], dtype: p.dtype, trainable: p.trainable }));
}

/** Parameter specs from their messages; `where` names the file in errors. */
export function parameterSpecsFromMessages(messages: readonly ParameterSpecMessage[], where: string): ParameterSpec[] {
  const seen = new Map<string, number>();
  return messages.map((p, i) => {
    const at = `${where} parameter '${p.name}'`;
    const earlier = seen.get(p.name);
    if (earlier !== undefined)
      throw new PoptfjsError(`${where}: parameters ${earlier} and ${i} are both named '${p.name}'; each parameter needs a name of its own`, { type: 'file' });
    seen.set(p.name, i);
    return { name: p.name, shape: checkedShape(p.shape, at), dtype: checkedDtype(p.dtype, at), trainable: p.trainable };
  });
}

/** `dtype[shape]`, as messages print a parameter. */
export function describeParameter(p: ParameterSpec): string {
  return `${p.dtype}[${p.shape.join(',')}]${p.trainable ? '' : ' (not trained)'}`;
}
