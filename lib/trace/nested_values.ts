/**
 * Nested inputs and outputs, as PopTorch takes tuples, lists and dicts of
 * tensors: arrays and plain objects holding tensors and plain values (null,
 * undefined, booleans, numbers, strings). The device sees only the tensors,
 * flattened depth first (an object's entries in its own order); a
 * {@link Structure} records the rest, to check later calls against and to
 * build the nested value again from the device's tensors. Inputs may also be
 * instances of a class with a custom argument parser
 * (`registerCustomArgParser`), taken apart and built again by it.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { customArgParserOf } from './custom_arg_parsers.js';

/** A value nested among tensors that is not a tensor: fixed when the model is compiled. */
export type PlainValue = null | undefined | boolean | number | string;

/** A tensor, a plain value, or an array or plain object of nested values. */
export type NestedTensors = tf.Tensor | PlainValue | NestedTensors[] | { [key: string]: NestedTensors };

/** The shape of a {@link NestedTensors} without its tensors. */
export type Structure =
  | { readonly kind: 'tensor' }
  /** A plain value (`value` absent: undefined). */
  | { readonly kind: 'value'; readonly value?: PlainValue }
  | { readonly kind: 'array'; readonly items: readonly Structure[] }
  /** A plain object's entries, in their order. */
  | { readonly kind: 'object'; readonly entries: ReadonlyArray<readonly [string, Structure]> }
  /** An instance of class `type`, whose custom argument parser yields `count` tensors. */
  | { readonly kind: 'custom'; readonly type: string; readonly count: number };

/** The instance each custom structure was made from, handed to its parser's `reconstruct` when the model is traced. */
const originals = new WeakMap<Structure, object>();

const TENSOR: Structure = { kind: 'tensor' };
const LEAVES = 'a tf.Tensor, an array or plain object of them, or a number, string, boolean, null or undefined';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function isPlainValue(value: unknown): value is PlainValue {
  return value === null || value === undefined || ['boolean', 'number', 'string'].includes(typeof value);
}

function showValue(value: PlainValue): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function showKeys(keys: readonly string[]): string {
  return keys.length > 0 ? `keys ${keys.join(', ')}` : 'no keys';
}

/** `path` followed by the key of an object entry: `.name`, or `["a key"]` when it is not an identifier. */
export function keyPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** What `value` is, for messages. */
export function describeValue(value: unknown): string {
  if (value instanceof tf.Tensor) return 'a tf.Tensor';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (isPlainObject(value)) return `an object with ${showKeys(Object.keys(value))}`;
  if (isPlainValue(value)) return showValue(value);
  if (ArrayBuffer.isView(value)) return 'a typed array';
  if (typeof value === 'function') return 'a function';
  const name = (value as object).constructor?.name;
  return name ? `a ${name}` : typeof value;
}

/** What `structure` holds, for messages. */
export function describeStructure(structure: Structure): string {
  switch (structure.kind) {
    case 'tensor':
      return 'a tf.Tensor';
    case 'value':
      return showValue(structure.value);
    case 'array':
      return `an array of ${structure.items.length}`;
    case 'object':
      return `an object with ${showKeys(structure.entries.map(([k]) => k))}`;
    case 'custom':
      return `a ${structure.type} (${structure.count} tensor(s) by its custom argument parser)`;
  }
}

/** `structure` written out in full, for messages: `[tensor, {a: tensor, b: null}]`. */
export function showStructure(structure: Structure): string {
  switch (structure.kind) {
    case 'tensor':
      return 'tensor';
    case 'value':
      return showValue(structure.value);
    case 'array':
      return `[${structure.items.map(showStructure).join(', ')}]`;
    case 'object':
      return `{${structure.entries.map(([k, s]) => `${JSON.stringify(k)}: ${showStructure(s)}`).join(', ')}}`;
    case 'custom':
      return `${structure.type}(${structure.count} tensors)`;
  }
}

/** The tensors a custom argument parser yields for `value` (at `at`), checked to be live tensors. */
function parsedTensors(value: object, parser: NonNullable<ReturnType<typeof customArgParserOf>>, at: string): tf.Tensor[] {
  const tensors = [...parser.yieldTensors(value)];
  tensors.forEach((t, i) => {
    if (!(t instanceof tf.Tensor))
      throw new PoptfjsError(`${at}: the custom argument parser of ${describeValue(value)} yielded ${describeValue(t)} as its tensor ${i}; expected tf.Tensors only`, {
        type: 'input',
      });
    if (t.isDisposed) throw new PoptfjsError(`${at}: the custom argument parser of ${describeValue(value)} yielded a disposed tensor (its tensor ${i})`, { type: 'input' });
  });
  return tensors;
}

/**
 * The structure of `value` (named `path` in errors): tensors, plain values,
 * arrays and plain objects, and with `custom` (a model's inputs) instances
 * of classes with a custom argument parser; anything else, a disposed tensor
 * or an array or object that contains itself is an error naming where.
 */
export function structureOf(value: unknown, path: string, custom = false): Structure {
  const within: unknown[] = [];
  const visit = (v: unknown, at: string): Structure => {
    if (v instanceof tf.Tensor) {
      if (v.isDisposed) throw new PoptfjsError(`${at} is a disposed tensor`, { type: 'input' });
      return TENSOR;
    }
    if (isPlainValue(v)) return v === undefined ? { kind: 'value' } : { kind: 'value', value: v };
    const parser = custom ? customArgParserOf(v) : undefined;
    if (parser) {
      const structure: Structure = { kind: 'custom', type: (v as object).constructor.name, count: parsedTensors(v as object, parser, at).length };
      originals.set(structure, v as object);
      return structure;
    }
    if (!Array.isArray(v) && !isPlainObject(v)) throw new PoptfjsError(`${at} is ${describeValue(v)}; expected ${LEAVES}`, { type: 'input' });
    if (within.includes(v)) throw new PoptfjsError(`${at} contains itself; expected a tree of ${LEAVES}`, { type: 'input' });
    within.push(v);
    const structure: Structure = Array.isArray(v)
      ? { kind: 'array', items: v.map((item, i) => visit(item, `${at}[${i}]`)) }
      : { kind: 'object', entries: Object.entries(v).map(([k, item]) => [k, visit(item, keyPath(at, k))] as const) };
    within.pop();
    return structure;
  };
  return visit(value, path);
}

/** The number of tensors in `structure`. */
export function tensorCount(structure: Structure): number {
  switch (structure.kind) {
    case 'tensor':
      return 1;
    case 'value':
      return 0;
    case 'array':
      return structure.items.reduce((n, s) => n + tensorCount(s), 0);
    case 'object':
      return structure.entries.reduce((n, [, s]) => n + tensorCount(s), 0);
    case 'custom':
      return structure.count;
  }
}

function differs(path: string, value: unknown, expected: Structure): PoptfjsError {
  const plain = expected.kind === 'value' && isPlainValue(value) ? ' (values that are not tensors are fixed when the model is compiled)' : '';
  return new PoptfjsError(`${path} is ${describeValue(value)}, but the model was compiled with ${describeStructure(expected)} there${plain}`, { type: 'input' });
}

/**
 * The tensors of `value`, taken in the order of `structure` (an object's
 * entries by key, whatever their order in `value`). Where `value` differs
 * from `structure` (a missing or extra key or element, another kind of
 * value, another plain value), an error names the path (`path` is the root,
 * e.g. `input 1`) and what the model was compiled with there.
 */
export function flattenAlong(value: unknown, structure: Structure, path: string): tf.Tensor[] {
  const out: tf.Tensor[] = [];
  // biome-ignore lint/complexity/noExcessiveCognitiveComplexity: one case per kind of structure, each comparing the value with it and naming where they differ
  const visit = (v: unknown, s: Structure, at: string): void => {
    switch (s.kind) {
      case 'tensor':
        if (!(v instanceof tf.Tensor)) throw differs(at, v, s);
        if (v.isDisposed) throw new PoptfjsError(`${at} is a disposed tensor`, { type: 'input' });
        out.push(v);
        return;
      case 'value':
        if (!Object.is(v, s.value)) throw differs(at, v, s);
        return;
      case 'array':
        if (!Array.isArray(v) || v.length !== s.items.length) throw differs(at, v, s);
        s.items.forEach((item, i) => visit(v[i], item, `${at}[${i}]`));
        return;
      case 'object': {
        if (!isPlainObject(v)) throw differs(at, v, s);
        const keys = s.entries.map(([k]) => k);
        const extra = Object.keys(v).find((k) => !keys.includes(k));
        if (extra !== undefined) {
          throw new PoptfjsError(`${keyPath(at, extra)} is not in the compiled model's inputs, which have an object with ${showKeys(keys)} at ${at}`, { type: 'input' });
        }
        for (const [k, item] of s.entries) {
          if (!(k in v)) throw new PoptfjsError(`${keyPath(at, k)} is missing; the model was compiled with ${describeStructure(item)} there`, { type: 'input' });
          visit(v[k], item, keyPath(at, k));
        }
        return;
      }
      case 'custom': {
        const parser = customArgParserOf(v);
        if (!parser || (v as object).constructor.name !== s.type) throw differs(at, v, s);
        const tensors = parsedTensors(v as object, parser, at);
        if (tensors.length !== s.count) {
          throw new PoptfjsError(`${at}: the custom argument parser of ${describeValue(v)} yielded ${tensors.length} tensor(s), but the model was compiled with ${s.count}`, {
            type: 'input',
          });
        }
        out.push(...tensors);
      }
    }
  };
  visit(value, structure, path);
  return out;
}

/** Builds `structure` again from its tensors in flattened order (exactly as many as it holds). */
export function unflatten(structure: Structure, tensors: readonly tf.Tensor[]): NestedTensors {
  let next = 0;
  const build = (s: Structure): NestedTensors => {
    switch (s.kind) {
      case 'tensor':
        return tensors[next++]!;
      case 'value':
        return s.value;
      case 'array':
        return s.items.map(build);
      case 'object':
        return Object.fromEntries(s.entries.map(([k, item]) => [k, build(item)]));
      case 'custom': {
        const original = originals.get(s);
        const parser = customArgParserOf(original);
        if (!original || !parser)
          throw new PoptfjsError(`a ${s.type} input can be built again only where its custom argument parser is registered and the model is compiled`, { type: 'input' });
        const taken = tensors.slice(next, (next += s.count));
        return parser.reconstruct(original, taken[Symbol.iterator]()) as NestedTensors;
      }
    }
  };
  const built = build(structure);
  if (next !== tensors.length) throw new PoptfjsError(`internal: a structure of ${next} tensor(s) was given ${tensors.length}`, { type: 'internal' });
  return built;
}

/** `structure` without its tensor number `index` (in flattened order). */
export function withoutTensor(structure: Structure, index: number): Structure {
  let next = 0;
  const drop = (s: Structure): Structure | undefined => {
    switch (s.kind) {
      case 'tensor':
        return next++ === index ? undefined : s;
      case 'value':
        return s;
      case 'custom':
        next += s.count;
        if (index < next && index >= next - s.count) throw new PoptfjsError(`internal: tensor ${index} belongs to a ${s.type}`, { type: 'internal' });
        return s;
      case 'array':
        return { kind: 'array', items: s.items.map(drop).filter((item): item is Structure => item !== undefined) };
      case 'object':
        return {
          kind: 'object',
          entries: s.entries.flatMap(([k, item]) => {
            const kept = drop(item);
            return kept ? [[k, kept] as const] : [];
          }),
        };
    }
  };
  return drop(structure) ?? { kind: 'array', items: [] };
}

/**
 * `value` checked to be a {@link Structure} (as read from a file); an error
 * naming `where` otherwise.
 */
export function checkedStructure(value: unknown, where: string): Structure {
  const bad = (): PoptfjsError => new PoptfjsError(`${where}: the structure of the inputs or outputs is malformed`, { type: 'file' });
  const check = (v: unknown): Structure => {
    if (!isPlainObject(v)) throw bad();
    switch (v.kind) {
      case 'tensor':
        return TENSOR;
      case 'value':
        if (!isPlainValue(v.value)) throw bad();
        return 'value' in v ? { kind: 'value', value: v.value } : { kind: 'value' };
      case 'array':
        if (!Array.isArray(v.items)) throw bad();
        return { kind: 'array', items: v.items.map(check) };
      case 'object':
        if (!Array.isArray(v.entries)) throw bad();
        return {
          kind: 'object',
          entries: v.entries.map((e: unknown) => {
            if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== 'string') throw bad();
            return [e[0], check(e[1])] as const;
          }),
        };
      case 'custom':
        if (typeof v.type !== 'string' || !Number.isInteger(v.count) || (v.count as number) < 0) throw bad();
        return { kind: 'custom', type: v.type, count: v.count as number };
      default:
        throw bad();
    }
  };
  return check(value);
}
