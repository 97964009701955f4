/**
 * `StepIO`: the host buffers of one `session.run`, as PopART's `PyStepIO`:
 * typed arrays keyed by tensor name, one per input (read) and one per anchor
 * (written in place). `session.initAnchorArrays()` makes the anchor buffers.
 *
 * A buffer holds, row-major, every value of a step: an input of shape `S`
 * holds `[batchesPerStep, accumulationFactor, replicationFactor, ...S]`
 * values (the factors of 1 left out of the shape); an anchor holds what its
 * return type returns (see `session.anchorArrayShape`). With runtime asserts
 * (the default) every buffer must have exactly that size, and the run stops
 * with an error stating the expected and actual sizes otherwise; without,
 * larger buffers are accepted and only their beginning is used.
 */
import { z } from 'zod';
import { checkedArgument } from './checked_argument.js';

/** A host buffer: FLOAT tensors in a Float32Array, integer tensors in an Int32Array, BOOL tensors in a Uint8Array (0 or 1). */
export type HostArray = Float32Array | Int32Array | Uint8Array;

/** Host buffers by tensor name. */
export type HostArrays = Readonly<Record<string, HostArray>> | ReadonlyMap<string, HostArray>;

const hostArray = z.custom<HostArray>((value) => value instanceof Float32Array || value instanceof Int32Array || value instanceof Uint8Array, {
  message: 'expected a Float32Array, an Int32Array or a Uint8Array',
});
const buffersSchema = z.map(z.string().min(1), hostArray);

function buffers(value: HostArrays, where: string): ReadonlyMap<string, HostArray> {
  const map = value instanceof Map ? value : new Map(Object.entries((value ?? {}) as Record<string, unknown>));
  return checkedArgument(buffersSchema, map, where);
}

/** The input and anchor buffers of a run. */
export class StepIO {
  /** Input buffers by input name. */
  readonly inputs: ReadonlyMap<string, HostArray>;
  /** Anchor buffers by anchor name, written by the run. */
  readonly outputs: ReadonlyMap<string, HostArray>;
  #runtimeAsserts = true;

  /**
   * @param inputs a buffer for each input of the model, by name
   * @param outputs a buffer for each anchor, by name (`session.initAnchorArrays()`)
   */
  constructor(inputs: HostArrays, outputs: HostArrays) {
    this.inputs = buffers(inputs, 'StepIO: inputs');
    this.outputs = buffers(outputs, 'StepIO: outputs');
  }

  /** Whether a run checks each buffer has exactly the size of a step (default true). */
  enableRuntimeAsserts(enabled: boolean): void {
    this.#runtimeAsserts = checkedArgument(z.boolean(), enabled, 'StepIO.enableRuntimeAsserts');
  }

  /** True when runs check the buffer sizes exactly. */
  get runtimeAssertsEnabled(): boolean {
    return this.#runtimeAsserts;
  }
}
