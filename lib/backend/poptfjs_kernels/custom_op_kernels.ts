/**
 * The kernels of `ops.customOp`: `poptfjs.CustomOp` runs the forward kernel
 * of the registered custom op its attributes name, `poptfjs.CustomOpGrad`
 * (the node of its backward pass) the op's gradient kernel.
 *
 * Both take a list of inputs: the op's inputs for the forward node; the
 * gradients of the outputs, the inputs and the outputs for the gradient
 * node. Their attributes are the call's: `name`, `domain`, `domainVersion`,
 * `attributes` and the `outputShapes` and `outputDtypes` of the example
 * outputs. The user's kernels see copies of the inputs (nothing they do
 * changes or frees them) and their results are checked against the declared
 * outputs.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import { registerForBackends } from './backend_kernel.js';
import { customOpTitle, registeredCustomOp, type CustomOpAttributes } from './custom_op_registry.js';
import { POPTFJS_KERNELS } from './kernel_names.js';

/** The most outputs a custom op may declare (tfjs saves the outputs a gradient reads by a list of flags, one per output). */
export const MAX_CUSTOM_OP_OUTPUTS = 256;

/** The attributes of a custom op node. */
export interface CustomOpNodeAttrs {
  readonly name: string;
  readonly domain: string;
  readonly domainVersion: number;
  readonly attributes: CustomOpAttributes;
  readonly outputShapes: readonly (readonly number[])[];
  readonly outputDtypes: readonly tf.DataType[];
}

function describe(shape: readonly number[], dtype: string): string {
  return `${dtype}[${shape.join(',')}]`;
}

function listOf(inputs: tf.NamedTensorInfoMap): tf.Tensor[] {
  return (Array.isArray(inputs) ? inputs : Object.values(inputs)) as tf.Tensor[];
}

/**
 * The tensors a user kernel returned, as a list, each of the shape and dtype
 * expected (else an error saying which is not); `null` entries are kept when
 * `allowNull` (an input without a gradient).
 */
function checkedResults(
  result: unknown,
  expected: ReadonlyArray<{ shape: readonly number[]; dtype: string }>,
  what: string,
  where: string,
  allowNull = false,
): Array<tf.Tensor | null> {
  const list: unknown[] = Array.isArray(result) ? result : [result];
  if (list.length !== expected.length)
    throw new PoptfjsError(`${where} returned ${list.length} ${what}(s) where ${expected.length} are expected`, { type: 'runtime', location: where });
  return list.map((t, i) => {
    const want = expected[i]!;
    if (t === null && allowNull) return null;
    if (!(t instanceof tf.Tensor))
      throw new PoptfjsError(`${where}: ${what} ${i} is not a tf.Tensor (got ${t === null ? 'null' : typeof t})`, { type: 'runtime', location: where });
    if (t.isDisposed) {
      throw new PoptfjsError(`${where}: ${what} ${i} is a disposed tensor; a kernel returns tensors it keeps alive (not ones it disposed or made inside a tf.tidy)`, {
        type: 'runtime',
        location: where,
      });
    }
    if (t.dtype !== want.dtype || t.shape.length !== want.shape.length || t.shape.some((n: number, d: number) => n !== want.shape[d])) {
      throw new PoptfjsError(`${where}: ${what} ${i} is ${describe(t.shape, t.dtype)}, but ${describe(want.shape, want.dtype)} is expected`, {
        type: 'runtime',
        location: where,
      });
    }
    return t;
  });
}

function forwardKernel(): tf.KernelFunc {
  return ({ inputs, attrs }) => {
    const a = attrs as unknown as CustomOpNodeAttrs;
    const where = `custom op ${customOpTitle(a.name, a.domain)}`;
    const op = registeredCustomOp(a.name, a.domain, 'customOp');
    const declared = a.outputShapes.map((shape, i) => ({ shape, dtype: a.outputDtypes[i]! }));
    return tf.tidy(() => {
      const copies = listOf(inputs).map((t) => tf.clone(t));
      const outputs = checkedResults(op.forward(copies, a.attributes), declared, 'output', where);
      return outputs.map((t) => tf.clone(t!));
    });
  };
}

function gradientKernel(): tf.KernelFunc {
  return ({ inputs, attrs }) => {
    const a = attrs as unknown as CustomOpNodeAttrs;
    const where = `the gradient of custom op ${customOpTitle(a.name, a.domain)}`;
    const op = registeredCustomOp(a.name, a.domain, 'customOp');
    if (!op.gradient) throw noGradient(a);
    const gradient = op.gradient.bind(op);
    const all = listOf(inputs);
    const outputs = a.outputShapes.length;
    return tf.tidy(() => {
      const copies = all.map((t) => tf.clone(t));
      const dys = copies.slice(0, outputs);
      const xs = copies.slice(outputs, copies.length - outputs);
      const ys = copies.slice(copies.length - outputs);
      const expected = xs.map((x) => ({ shape: x.shape, dtype: x.dtype }));
      const grads = checkedResults(gradient(dys, xs, ys, a.attributes), expected, 'input gradient', where, true);
      return grads.map((g, i) => (g === null ? tf.zeros(xs[i]!.shape, xs[i]!.dtype) : tf.clone(g)));
    });
  };
}

function noGradient(a: CustomOpNodeAttrs): PoptfjsError {
  return new PoptfjsError(
    `custom op ${customOpTitle(a.name, a.domain)} has no gradient, so a model cannot be trained through it: register it with a gradient(outputGradients, inputs, outputs, attributes) function`,
    { type: 'trace', location: `${a.domain}::${a.name}` },
  );
}

/**
 * The backward pass of a custom op: one `poptfjs.CustomOpGrad` node, made
 * when the gradient is first asked for, whose outputs are the gradients of
 * all the inputs. An op registered without a gradient is an error naming it.
 */
const customOpGradient: tf.GradConfig = {
  kernelName: POPTFJS_KERNELS.customOp,
  saveAllInputs: true,
  outputsToSave: new Array<boolean>(MAX_CUSTOM_OP_OUTPUTS).fill(true),
  gradFunc: (dy, saved, attrs) => {
    const a = attrs as unknown as CustomOpNodeAttrs;
    const op = registeredCustomOp(a.name, a.domain, 'customOp');
    if (!op.gradient) throw noGradient(a);
    const dys = Array.isArray(dy) ? dy : [dy];
    const xs = saved.slice(0, saved.length - dys.length);
    const grads = tf.engine().runKernel(POPTFJS_KERNELS.customOpGradient, [...dys, ...saved] as unknown as tf.NamedTensorMap, attrs) as unknown as tf.Tensor | tf.Tensor[];
    const list = Array.isArray(grads) ? grads : [grads];
    return xs.map((_, i) => () => list[i]!) as unknown as Record<string, () => tf.Tensor>;
  },
};

/** Registers the custom op kernels for `backendNames`, and the forward kernel's gradient. */
export function registerCustomOpKernels(backendNames: readonly string[]): void {
  registerForBackends(POPTFJS_KERNELS.customOp, backendNames, forwardKernel);
  registerForBackends(POPTFJS_KERNELS.customOpGradient, backendNames, gradientKernel);
  if (!tf.getGradient(POPTFJS_KERNELS.customOp)) tf.registerGradient(customOpGradient);
}
