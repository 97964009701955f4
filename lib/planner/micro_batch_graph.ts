/**
 * A traced graph at any micro-batch size, from two traces of the same model
 * at two sizes, without tracing it again.
 *
 * A model's graph has the same nodes at every micro-batch size; what changes
 * are numbers that follow the micro-batch: a dimension of a value (`m`,
 * `m × 197`), an attribute (a `Reshape` to `[m × 128, 1024]`, a `Fill` of
 * shape `[m, 10]`). Two traces, at sizes `a` and `b`, tell them apart: a
 * number equal in both is fixed, and a number `x` at `a` and `y` at `b` is
 * `x + (y − x) / (b − a) × (m − a)` at size `m`; so is each element of a
 * constant that follows it (the count a batch-norm's mean divides by,
 * `m × 56 × 56`). Names (of parameters and layers) may differ between the
 * two builds: the graph keeps the first's. The derivation is refused (and
 * the model must be traced at that size) when the two graphs differ in
 * anything but such numbers, when a number does not change by a whole
 * multiple of the micro-batch, when a dimension would not be positive, or
 * when a dimension that follows the micro-batch is 1 at either trace or
 * would be 1 at `m`: tfjs treats a dimension of 1 apart (it broadcasts it,
 * and its gradients skip the sum over it), so the graph at such a size has
 * other nodes. So, for the same reason, when a tensor the host makes (a
 * constant, a fill) that follows the micro-batch would be on the other side
 * of `SHAPE_ONLY_MAX_KEPT_ELEMENTS` at `m` than at the traces: the
 * shape-only backend keeps the values of smaller ones, which the trace then
 * holds as constants, where it holds a `Fill` kernel for a larger one.
 *
 * Derive the graph as traced, before the IR patterns: a pattern may choose
 * by size (`SumAsAveragePool` rewrites only sums of 16k elements or more),
 * so the patterns run on each derived graph as on a traced one.
 */
import { SHAPE_ONLY_MAX_KEPT_ELEMENTS } from '../backend/shape_only/shape_only_backend.js';
import type { AttrValue, ConstantData, Graph, Node, Value, ValueSource } from '../ir/graph.js';

/** A number of the graph as a function of the micro-batch size: `at + slope × (m − base)`. */
interface Affine {
  readonly at: number;
  readonly slope: number;
}

/** Why two traces cannot give the graph at other sizes (a message for the log). */
export class MicroBatchDerivationError extends Error {}

function mismatch(what: string): never {
  throw new MicroBatchDerivationError(what);
}

/** The rule of one number, seen as `x` at size `a` and `y` at size `b`. */
function affine(x: number, y: number, a: number, b: number, what: string): Affine {
  if (x === y) return { at: x, slope: 0 };
  const slope = (y - x) / (b - a);
  if (!Number.isInteger(x) || !Number.isInteger(slope)) mismatch(`${what} is ${x} at micro-batch ${a} and ${y} at ${b}: not a whole multiple of the micro-batch`);
  return { at: x, slope };
}

/**
 * The graph of a model at any micro-batch size, derived from its graphs at
 * two sizes.
 */
export class MicroBatchGraph {
  readonly #graph: Graph;
  readonly #base: number;
  /** The rule of each number that changes, by where it is in the graph. */
  readonly #shapes = new Map<number, Affine[]>();
  /** The values of each constant that follows the micro-batch. */
  readonly #constants = new Map<number, ConstantRule>();
  readonly #attrRules = new Map<number, Map<string, Affine>>();
  readonly #bodies = new Map<number, MicroBatchGraph[]>();
  /** The values the host makes: constants and fills, which a trace holds as constants when they are small. */
  readonly #hostMade: ReadonlySet<number>;

  /**
   * Compares `first` (traced at micro-batch `a`) with `second` (at `b`); a
   * {@link MicroBatchDerivationError} says what differs when they are not
   * the same graph up to numbers that follow the micro-batch.
   */
  constructor(first: Graph, a: number, second: Graph, b: number) {
    if (a === b) mismatch(`the two traces are at the same micro-batch (${a})`);
    this.#graph = first;
    this.#base = a;
    if (first.values.length !== second.values.length || first.nodes.length !== second.nodes.length) {
      mismatch(`the graph has ${first.nodes.length} nodes and ${first.values.length} values at micro-batch ${a}, ${second.nodes.length} and ${second.values.length} at ${b}`);
    }
    // Names (of parameters and layers) may differ between two builds of a model: what they name must not.
    const shape = (g: Graph) => JSON.stringify([g.inputs, { ...g.roles, gradients: Object.values(g.roles.gradients ?? {}) }, g.assignments.map((x) => x.value)]);
    if (shape(first) !== shape(second)) mismatch('the inputs, outputs or assignments of the graph differ between the two traces');
    const fills = new Set(first.nodes.filter((n) => n.kernel === 'Fill').flatMap((n) => n.outputs));
    this.#hostMade = new Set(first.values.filter((v) => v.source.kind === 'constant' || fills.has(v.id)).map((v) => v.id));
    first.values.forEach((v, i) => this.#compareValue(v, second.values[i]!, a, b));
    first.nodes.forEach((n, i) => this.#compareNode(n, second.nodes[i]!, a, b));
  }

  #compareValue(v: Value, w: Value, a: number, b: number): void {
    const where = `value %${v.id}`;
    if (v.dtype !== w.dtype || v.shape.length !== w.shape.length || v.precision !== w.precision || !sameSource(v.source, w.source)) {
      mismatch(`${where} is ${v.dtype}[${v.shape}] at micro-batch ${a} and ${w.dtype}[${w.shape}] at ${b}, or comes from elsewhere`);
    }
    if (v.source.kind === 'constant' && w.source.kind === 'constant' && !sameData(v.source.data, w.source.data)) {
      this.#constants.set(v.id, constantRule(v.source.data, w.source.data, a, b, where));
    }
    if (v.shape.every((d, i) => d === w.shape[i])) return;
    const rules = v.shape.map((d, i) => affine(d, w.shape[i]!, a, b, `dimension ${i} of ${where}`));
    const ones = rules.findIndex((rule, i) => rule.slope !== 0 && (v.shape[i] === 1 || w.shape[i] === 1));
    if (ones >= 0) mismatch(`dimension ${ones} of ${where} follows the micro-batch and is 1 at micro-batch ${v.shape[ones] === 1 ? a : b}, where tfjs traces other nodes`);
    if (this.#hostMade.has(v.id) && kept(v.shape) !== kept(w.shape))
      mismatch(
        `${where} has ${elements(v.shape)} elements at micro-batch ${a} and ${elements(w.shape)} at ${b}, across the ${SHAPE_ONLY_MAX_KEPT_ELEMENTS} a trace keeps the values of`,
      );
    this.#shapes.set(v.id, rules);
  }

  #compareNode(n: Node, o: Node, a: number, b: number): void {
    const where = `node #${n.id} (${n.kernel})`;
    if (n.kernel !== o.kernel || JSON.stringify([n.inputs, n.outputs, n.inputNames]) !== JSON.stringify([o.inputs, o.outputs, o.inputNames])) {
      mismatch(`${where} differs between the two traces`);
    }
    if (JSON.stringify(unnamed(n)) !== JSON.stringify(unnamed(o))) mismatch(`the annotations of ${where} differ between the two traces`);
    const rules = new Map<string, Affine>();
    const compare = (x: AttrValue, y: AttrValue, path: string): void => {
      if (typeof x === 'number' && typeof y === 'number') {
        if (x !== y) rules.set(path, affine(x, y, a, b, `attribute ${path} of ${where}`));
        return;
      }
      if (Array.isArray(x) && Array.isArray(y) && x.length === y.length) {
        x.forEach((item, i) => compare(item, y[i]!, `${path}.${i}`));
        return;
      }
      if (x !== null && y !== null && typeof x === 'object' && typeof y === 'object' && !Array.isArray(x) && !Array.isArray(y)) {
        const keys = Object.keys(x);
        if (keys.length !== Object.keys(y).length) mismatch(`attribute ${path} of ${where} differs between the two traces`);
        for (const key of keys) {
          if (!(key in y)) mismatch(`attribute ${path}.${key} of ${where} is missing at micro-batch ${b}`);
          compare(x[key]!, y[key]!, `${path}.${key}`);
        }
        return;
      }
      if (x !== y) mismatch(`attribute ${path} of ${where} differs between the two traces`);
    };
    compare(n.attrs, o.attrs, '');
    if (rules.size > 0) this.#attrRules.set(n.id, rules);
    if (n.bodies || o.bodies) {
      if (!n.bodies || !o.bodies || n.bodies.length !== o.bodies.length) mismatch(`the bodies of ${where} differ between the two traces`);
      this.#bodies.set(
        n.id,
        n.bodies.map((body, i) => new MicroBatchGraph(body, a, o.bodies![i]!, b)),
      );
    }
  }

  /** The graph at micro-batch `m`; a {@link MicroBatchDerivationError} when a dimension would not be positive. */
  at(m: number): Graph {
    if (m === this.#base) return this.#graph;
    const value = (rule: Affine): number => rule.at + rule.slope * (m - this.#base);
    const dimension = (rule: Affine, what: string): number => {
      const x = value(rule);
      // A dimension of 1 where the traces had more: tfjs would have traced other nodes (see the module's doc).
      if (x < 1 || (x === 1 && rule.slope !== 0)) mismatch(`${what} would be ${x} at micro-batch ${m}`);
      return x;
    };
    const values = this.#graph.values.map((v): Value => {
      const rules = this.#shapes.get(v.id);
      const constant = this.#constants.get(v.id);
      if (!rules && !constant) return v;
      const shape = rules ? rules.map((rule, i) => dimension(rule, `dimension ${i} of value %${v.id}`)) : v.shape;
      if (this.#hostMade.has(v.id) && kept(shape) !== kept(v.shape)) {
        mismatch(
          `value %${v.id} would have ${elements(shape)} elements at micro-batch ${m}, ${elements(v.shape)} at ${this.#base}: across the ${SHAPE_ONLY_MAX_KEPT_ELEMENTS} a trace keeps the values of`,
        );
      }
      const source = constant ? { kind: 'constant' as const, data: constant(m, elements(shape)) } : v.source;
      return { ...v, shape, source };
    });
    const nodes = this.#graph.nodes.map((n): Node => {
      const rules = this.#attrRules.get(n.id);
      const bodies = this.#bodies.get(n.id);
      if (!rules && !bodies) return n;
      let attrs = n.attrs;
      if (rules) {
        attrs = structuredClone(n.attrs) as Record<string, AttrValue>;
        for (const [path, rule] of rules) setAt(attrs, path, value(rule));
      }
      return { ...n, attrs, ...(bodies ? { bodies: bodies.map((body) => body.at(m)) } : {}) };
    });
    return { ...this.#graph, values, nodes };
  }
}

function elements(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

/** True if the shape-only backend keeps the values of a tensor of this shape, so a trace may hold it as a constant. */
function kept(shape: readonly number[]): boolean {
  return elements(shape) <= SHAPE_ONLY_MAX_KEPT_ELEMENTS;
}

/** A node's annotations without the names of its layer and scope, which may differ between two builds of a model. */
function unnamed(node: Node): object {
  const { layer: _layer, scope: _scope, ...rest } = node.annotations;
  return rest;
}

function sameSource(s: ValueSource, t: ValueSource): boolean {
  if (s.kind !== t.kind) return false;
  switch (s.kind) {
    case 'input':
      return t.kind === 'input' && s.index === t.index && s.name === t.name;
    case 'param':
      return t.kind === 'param' && s.trainable === t.trainable;
    case 'node':
      return t.kind === 'node' && s.node === t.node && s.output === t.output;
    case 'constant':
      return true;
  }
}

/** True if two constants' values are the same (both unknown, or equal element by element). */
function sameData(x: ConstantData | null, y: ConstantData | null): boolean {
  if (x === null || y === null) return x === y;
  if (x.length !== y.length || x.constructor !== y.constructor) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i] && !(Number.isNaN(x[i]) && Number.isNaN(y[i]))) return false;
  return true;
}

/** The values of a constant at a micro-batch size, from the number of its elements there. */
type ConstantRule = (m: number, elements: number) => ConstantData;

/**
 * The rule of a constant seen as `x` at size `a` and `y` at `b`: numbers,
 * both known, either each a whole multiple of the micro-batch apart (the
 * same number of them), or one number filling both (a constant of ones, one
 * a sample).
 */
function constantRule(x: ConstantData | null, y: ConstantData | null, a: number, b: number, where: string): ConstantRule {
  if (x === null || y === null || x.constructor !== y.constructor || Array.isArray(x) || Array.isArray(y)) {
    mismatch(`the values of constant ${where} differ between the two traces`);
  }
  const make = (elements: ArrayLike<number>): ConstantData =>
    x instanceof Int32Array ? Int32Array.from(elements) : x instanceof Uint8Array ? Uint8Array.from(elements) : Float32Array.from(elements);
  const fill = x[0];
  if (x.length !== y.length) {
    if (x.every((xi) => xi === fill) && y.every((yi) => yi === fill)) return (_m, elements) => make(new Array<number>(elements).fill(fill!));
    mismatch(`constant ${where} has ${x.length} values at micro-batch ${a} and ${y.length} at ${b}, not one number filling both`);
  }
  const rules = Array.from(x, (xi, i) => affine(xi, y[i]!, a, b, `element ${i} of constant ${where}`));
  return (m) => make(rules.map((rule) => rule.at + rule.slope * (m - a)));
}

/** Sets the number at `path` (`.key.0.key`) of an attribute record. */
function setAt(attrs: Record<string, AttrValue>, path: string, x: number): void {
  const keys = path.split('.').slice(1);
  let target: AttrValue = attrs;
  for (const key of keys.slice(0, -1)) target = (target as Record<string, AttrValue>)[key]!;
  (target as Record<string, AttrValue>)[keys[keys.length - 1]!] = x;
}
