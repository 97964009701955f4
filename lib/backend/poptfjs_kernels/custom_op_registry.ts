/**
 * The custom ops of this process: JavaScript kernels registered by
 * (name, domain), which `ops.customOp` nodes (`poptfjs.CustomOp`) run, as
 * PopTorch's `custom_op` runs a PopART custom op loaded from a library.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';

/** An attribute of a custom op: a number, a string, or an array of numbers or of strings (PopART's attribute types). */
export type CustomOpAttribute = number | string | readonly number[] | readonly string[];

/** The attributes of a custom op call, by name. */
export type CustomOpAttributes = Readonly<Record<string, CustomOpAttribute>>;

/** A custom op: its identity and its kernels. */
export interface CustomOpDefinition {
  /** The op's name (PopART's op type), e.g. `Cube`. */
  readonly name: string;
  /** The op's domain, e.g. `com.acme`. */
  readonly domain: string;
  /**
   * The forward kernel: the outputs for `inputs`, in the order and with the
   * shapes and dtypes of the call's example outputs. Runs on the device's
   * backend each time the node runs; tensors it makes and does not return
   * are freed.
   */
  forward(inputs: tf.Tensor[], attributes: CustomOpAttributes): tf.Tensor | tf.Tensor[];
  /**
   * The gradient kernel (needed to train through the op): the gradient of
   * the loss with respect to each input, given the gradient with respect to
   * each output (zeros for outputs the loss does not use), the inputs and the
   * outputs of the forward kernel. `null` for an input with no gradient (it
   * gets zeros).
   */
  gradient?(outputGradients: tf.Tensor[], inputs: tf.Tensor[], outputs: tf.Tensor[], attributes: CustomOpAttributes): Array<tf.Tensor | null> | tf.Tensor;
}

const registry = new Map<string, CustomOpDefinition>();

function keyOf(name: string, domain: string): string {
  return JSON.stringify([name, domain]);
}

/** How messages name a custom op: `'Cube' (domain 'com.acme')`. */
export function customOpTitle(name: string, domain: string): string {
  return `'${name}' (domain '${domain}')`;
}

/**
 * Registers custom op `definition` for this process, replacing one of the
 * same name and domain. Models that call it with `ops.customOp` can then be
 * traced, and executables that hold it (compiled, loaded or imported) run.
 */
export function registerCustomOp(definition: CustomOpDefinition): void {
  const where = (problem: string) => new PoptfjsError(`registerCustomOp: ${problem}`, { type: 'trace', location: 'registerCustomOp' });
  if (typeof definition !== 'object' || definition === null)
    throw where(`expected { name, domain, forward, gradient? }, got ${definition === null ? 'null' : typeof definition}`);
  for (const key of ['name', 'domain'] as const) {
    if (typeof definition[key] !== 'string' || definition[key] === '') throw where(`'${key}' must be a non-empty string, got ${JSON.stringify(definition[key])}`);
  }
  if (typeof definition.forward !== 'function') throw where(`custom op ${customOpTitle(definition.name, definition.domain)} needs a forward(inputs, attributes) function`);
  if (definition.gradient !== undefined && typeof definition.gradient !== 'function') {
    throw where(`the gradient of custom op ${customOpTitle(definition.name, definition.domain)} must be a function, got ${typeof definition.gradient}`);
  }
  registry.set(keyOf(definition.name, definition.domain), definition);
}

/** Removes custom op (`name`, `domain`) from this process; returns whether it was registered. */
export function unregisterCustomOp(name: string, domain: string): boolean {
  return registry.delete(keyOf(name, domain));
}

/** The custom op (`name`, `domain`); a clear error naming it when this process has not registered it. */
export function registeredCustomOp(name: string, domain: string, where: string): CustomOpDefinition {
  const definition = registry.get(keyOf(name, domain));
  if (definition) return definition;
  throw new PoptfjsError(
    `${where}: custom op ${customOpTitle(name, domain)} is not registered in this process; ` +
      `register its kernels first with ops.registerCustomOp({ name: '${name}', domain: '${domain}', forward, gradient })`,
    { type: 'trace', location: `${domain}::${name}` },
  );
}
