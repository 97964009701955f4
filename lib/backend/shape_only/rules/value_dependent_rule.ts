/**
 * Rules for kernels whose output shapes depend on the values of their inputs
 * (`Unique`, `NonMaxSuppressionV3`, the ragged and sparse kernels, string
 * splitting), and for kernels that consume values on the host (`Draw`).
 *
 * Such a kernel can be planned only when the host holds the values it needs:
 * small tensors written from the host keep theirs on the shape-only backend.
 * Then its output shapes are those of the cpu backend's kernel run on those
 * values (or of a formula over the few values needed); otherwise the rule
 * throws a {@link ShapeOnlyError} naming the kernel, the input and why.
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelCall, type KernelShapeRule, type OutputSpec } from './kernel_shape_rule.js';
import { SHAPE_ONLY_REMEDY, ShapeOnlyError } from './shape_only_error.js';

const CPU = 'cpu';

/** How a value-dependent rule computes its outputs from a few of its inputs' values. */
export interface ValuesFormula {
  /** The inputs whose values the formula needs. */
  readonly needs: readonly string[];
  /** The outputs, given the call and the values of the needed inputs by name. */
  readonly outputs: (call: KernelCall, values: ReadonlyMap<string, tf.BackendValues>) => OutputSpec | OutputSpec[];
}

function unplannable(call: KernelCall, reason: string, input: tf.TensorInfo, inputName: string): ShapeOnlyError {
  return new ShapeOnlyError(
    `poptfjs is planning with shapes only and cannot plan kernel '${call.kernelName}': ${reason}, and its input '${inputName}' ` +
      `(shape [${input.shape.join(',')}], ${input.dtype}) has no values on the shape-only backend, which keeps only those of ` +
      `small tensors written from the host; ${SHAPE_ONLY_REMEDY}`,
    call.kernelName,
  );
}

/** The named tensor inputs of `call` (lists flattened, with their position), for error messages and checks. */
function namedTensors(call: KernelCall): Array<[string, tf.TensorInfo]> {
  if (Array.isArray(call.inputs)) return call.inputs.map((input, i) => [`${i}`, input]);
  return Object.entries(call.inputs as Record<string, tf.TensorInfo | tf.TensorInfo[] | undefined | null>).flatMap(([name, input]) =>
    input === undefined || input === null
      ? []
      : Array.isArray(input)
        ? input.map((t, i): [string, tf.TensorInfo] => [`${name}[${i}]`, t])
        : [[name, input] as [string, tf.TensorInfo]],
  );
}

/**
 * The outputs of the cpu backend's kernel run on `call`'s inputs, whose
 * values are all known: each input is written to the cpu backend, the kernel
 * runs, and only the outputs' shapes and dtypes are kept.
 */
function outputsOnCpu(call: KernelCall): OutputSpec | OutputSpec[] {
  const cpu = tf.engine().findBackend(CPU) as tf.KernelBackend | null;
  const kernel = tf.getKernel(call.kernelName, CPU);
  if (cpu === null || kernel === undefined) {
    throw new ShapeOnlyError(`the shape-only backend needs the '${CPU}' backend's kernel '${call.kernelName}' to plan it from its inputs' values`, call.kernelName);
  }
  const written: tf.DataId[] = [];
  const copy = (input: tf.TensorInfo): tf.TensorInfo => {
    const dataId = cpu.write(call.knownValues(input)!, [...input.shape], input.dtype);
    written.push(dataId);
    return { dataId, shape: input.shape, dtype: input.dtype };
  };
  const inputs = Array.isArray(call.inputs)
    ? call.inputs.map(copy)
    : Object.fromEntries(
        Object.entries(call.inputs as Record<string, tf.TensorInfo | tf.TensorInfo[] | undefined | null>).map(([name, input]) => [
          name,
          input === undefined || input === null ? input : Array.isArray(input) ? input.map(copy) : copy(input),
        ]),
      );
  try {
    const result = kernel.kernelFunc({ inputs: inputs as tf.NamedTensorInfoMap, attrs: call.attrs, backend: cpu });
    const list = Array.isArray(result) ? result : [result];
    for (const info of list) cpu.disposeData(info.dataId);
    const outputs = list.map((info) => output(info.shape, info.dtype));
    return Array.isArray(result) ? outputs : outputs[0]!;
  } finally {
    for (const dataId of written) cpu.disposeData(dataId);
  }
}

/**
 * A rule for a kernel whose output shapes depend on input values, for
 * `reason` (said in the error). With a `formula`, only the inputs it names
 * need values; without, every input needs values and the cpu backend's
 * kernel gives the outputs.
 */
export function valueDependentRule(reason: string, formula?: ValuesFormula): KernelShapeRule {
  const rule = (call: KernelCall): OutputSpec | OutputSpec[] => {
    const needed = formula === undefined ? namedTensors(call) : formula.needs.map((name): [string, tf.TensorInfo] => [name, call.input(name)]);
    const values = new Map<string, tf.BackendValues>();
    for (const [name, input] of needed) {
      const known = call.knownValues(input);
      if (known === undefined) throw unplannable(call, reason, input, name);
      values.set(name, known);
    }
    return formula === undefined ? outputsOnCpu(call) : formula.outputs(call, values);
  };
  return Object.assign(rule, { valueDependence: reason });
}

/** A rule for a kernel that cannot be planned at all, for `reason` (a kernel that consumes values on the host). */
export function unplannableRule(reason: string): KernelShapeRule {
  const rule = (call: KernelCall): never => {
    throw new ShapeOnlyError(`poptfjs is planning with shapes only and cannot plan kernel '${call.kernelName}': ${reason}; ${SHAPE_ONLY_REMEDY}`, call.kernelName);
  };
  return Object.assign(rule, { valueDependence: reason });
}
