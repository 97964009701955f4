/**
 * The contract of a shape rule: what a kernel of the shape-only backend is
 * given and what it gives back.
 *
 * A rule sees a kernel call as tfjs makes it (inputs as `TensorInfo`s, attrs)
 * and returns the shape and dtype of each output, exactly as the cpu backend
 * would make them. It reads no tensor data, with one exception: a rule whose
 * output shape depends on input values may use the values of small tensors
 * written from the host ({@link KernelCall.knownValues}).
 */
import type * as tf from '@tensorflow/tfjs';
import { ShapeOnlyError } from './shape_only_error.js';

/** The shape and dtype of one kernel output. */
export interface OutputSpec {
  readonly shape: readonly number[];
  readonly dtype: tf.DataType;
}

/** An input of a kernel call: one tensor, or a list (the nested splits of `RaggedGather`, ...). */
type KernelInput = tf.TensorInfo | readonly tf.TensorInfo[];

/** Looks up the values of a tensor, when the host holds them (small written tensors); else undefined. */
export type KnownValuesLookup = (input: tf.TensorInfo) => tf.BackendValues | undefined;

/** One call of a kernel, as a shape rule sees it. */
export class KernelCall {
  constructor(
    /** The kernel called. */
    readonly kernelName: string,
    /** The inputs, by name; kernels that take a list of tensors (`Concat`, `AddN`, ...) get an array. */
    readonly inputs: tf.NamedTensorInfoMap | readonly tf.TensorInfo[],
    /** The attributes, by name. */
    readonly attrs: tf.NamedAttrMap,
    private readonly lookUpValues: KnownValuesLookup,
  ) {}

  /** The tensor input `name`; throws if the call lacks it. */
  input(name: string): tf.TensorInfo {
    const input = this.optionalInput(name);
    if (input === undefined) throw this.malformed(`has no input '${name}'`);
    return input;
  }

  /** The tensor input `name`, or undefined when the call has none (optional inputs such as a fused bias). */
  optionalInput(name: string): tf.TensorInfo | undefined {
    if (Array.isArray(this.inputs)) throw this.malformed(`takes a list of inputs, not an input named '${name}'`);
    const input = (this.inputs as Record<string, KernelInput | undefined | null>)[name];
    if (input === undefined || input === null) return undefined;
    if (Array.isArray(input)) throw this.malformed(`input '${name}' is a list of tensors`);
    return input as tf.TensorInfo;
  }

  /** The inputs of a kernel that takes a list of tensors (`Concat`, `AddN`, `Pack`, `Einsum`). */
  inputList(): readonly tf.TensorInfo[] {
    if (!Array.isArray(this.inputs)) throw this.malformed('takes named inputs, not a list');
    return this.inputs;
  }

  /** The attributes, typed as the kernel's attribute interface in tfjs (`tf.Conv2DAttrs`, ...). */
  attrsAs<Attrs>(): Attrs {
    return this.attrs as unknown as Attrs;
  }

  /** The values of `input` when the host holds them (a small tensor written from the host), else undefined. */
  knownValues(input: tf.TensorInfo): tf.BackendValues | undefined {
    return this.lookUpValues(input);
  }

  private malformed(problem: string): ShapeOnlyError {
    return new ShapeOnlyError(`the shape-only backend cannot plan kernel '${this.kernelName}': the call ${problem}`, this.kernelName);
  }
}

/**
 * The shape rule of a kernel: the output (or, for kernels with several
 * outputs, the list of outputs) of a call. A rule whose outputs depend on its
 * inputs' values carries, in `valueDependence`, why; it throws a
 * {@link ShapeOnlyError} unless the values it needs are known.
 */
export type KernelShapeRule = ((call: KernelCall) => OutputSpec | OutputSpec[]) & { readonly valueDependence?: string };

/** An output of `shape` and `dtype`. */
export function output(shape: readonly number[], dtype: tf.DataType): OutputSpec {
  return { shape, dtype };
}
