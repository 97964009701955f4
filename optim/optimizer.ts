/**
 * The optimizer base: which variables it trains, in which parameter groups,
 * with which hyper-parameters, and the update it applies on the device once
 * the gradients of a step are reduced and unscaled.
 *
 * Hyper-parameters come in two kinds, as in PopTorch: group attributes
 * (torch's hyper-parameters such as `lr`; each parameter group has its own
 * value) and optimizer attributes (`lossScaling`, `accumType`, ...; one value
 * for all groups). An executor uses the values of the optimizer it was given
 * when it compiled or when `setOptimizer(opt)` was last called: change a
 * value, then call `setOptimizer` to use it.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../lib/common/errors.js';
import { getLogger } from '../lib/common/log.js';
import type { Float16Rounding } from '../lib/precision/float16_rounding.js';
import { isLayersModel, trainableVariables } from '../lib/trace/model_function.js';
import { type AccumType, type HyperShape, type HyperValue, optimizerError, parseHyperValues, sameHyperValue } from './optimizer_options.js';
import type { OptimizerState, OptimizerStateData, OptimizerStateRecord, OptimizerStateStore, ParameterState, TensorData } from './optimizer_state.js';
import {
  copyOptimizerStateData,
  OPTIMIZER_STATE_DICT_FORMAT,
  OPTIMIZER_STATE_DICT_VERSION,
  parseOptimizerStateDict,
  type OptimizerStateDict,
} from './optimizer_state_dict.js';
import { splitIntoGroups, type ParamGroup, type ParamGroupSpec } from './param_groups.js';
import type { ScalarConstants } from './scalar_constants.js';
import { type AttributePlace, UnexpectedAttributes, type UnknownAttributeCheck } from './unknown_attributes.js';
import { VariableAttributes } from './variable_attributes.js';

export type { OptimizerState, ParameterState } from './optimizer_state.js';

const log = getLogger('poptfjs');

/** The own properties of an optimizer that are not attributes. */
const OWN_FIELDS: ReadonlySet<string> = new Set(['type', 'variables', 'paramGroups', 'variableAttrs']);

/** What an optimizer trains: a layers model (its trainable weights) or a list of variables. */
export type OptimizerTarget = tf.LayersModel | readonly tf.Variable[];

/** The optimizers poptfjs implements. */
export type OptimizerType = 'SGD' | 'Adam' | 'AdamW' | 'RMSprop' | 'LAMB';

/** Group attribute values. */
export type GroupValues = Record<string, HyperValue>;

/** Optimizer attribute values; every optimizer has `lossScaling` and `accumType`. */
export type GlobalValues = Record<string, HyperValue> & { lossScaling: number; accumType: AccumType };

/** The options every optimizer constructor takes: its attributes and `paramGroups`. */
export type OptimizerOptions<G, O> = Partial<G> & Partial<O> & { paramGroups?: ReadonlyArray<ParamGroupSpec<G>> };

/** A frozen copy of an optimizer's values: what an executor trains with between two `setOptimizer` calls. */
export interface OptimizerSettings<G extends GroupValues = GroupValues, O extends GlobalValues = GlobalValues> {
  readonly type: OptimizerType;
  readonly global: Readonly<O>;
  readonly groups: ReadonlyArray<Readonly<G>>;
  /** The variable names of each group. */
  readonly groupParams: ReadonlyArray<readonly string[]>;
  /** The group of each variable, by name. */
  readonly groupOf: ReadonlyMap<string, number>;
}

/** Where an optimizer state slot is kept: float32, float16, or the precision of its parameter. */
export type SlotPrecision = AccumType | 'parameter';

/** A state tensor the optimizer keeps per parameter (same shape as the parameter). */
export interface StateSlot {
  readonly name: string;
  readonly precision: SlotPrecision;
}

/** One parameter's update, as the optimizer's formula sees it. */
export interface ParameterUpdate<G, O> {
  readonly weight: tf.Tensor;
  /** The reduced, unscaled (and clipped) gradient. */
  readonly grad: tf.Tensor;
  /** The slots before this step (each at its start value, {@link Optimizer.slotStart}, before the first step). */
  readonly slots: Readonly<ParameterState>;
  readonly group: Readonly<G>;
  readonly global: Readonly<O>;
  /** The step number, from 1. */
  readonly step: number;
  /** `value` as slot `slot` holds it: rounded to float16 when the slot is kept in float16 (use it for the rest of the step). */
  stored(slot: string, value: tf.Tensor): tf.Tensor;
  /** The float32 scalar of `value`, kept from step to step while it is used (`tf.mul(x, u.scalar(lr))` is `tf.mul(x, lr)` bit for bit); do not dispose it. */
  scalar(value: number): tf.Tensor;
}

/** What an update returns: the new weight and the new slots. */
export interface ParameterResult {
  weight: tf.Tensor;
  slots: ParameterState;
}

/** The parameters updated together (all unsplit parameters, or one replica group of a split one). */
export interface ParameterBatch {
  readonly weights: ReadonlyMap<string, tf.Tensor>;
  /** Reduced, unscaled gradients. */
  readonly grads: ReadonlyMap<string, tf.Tensor>;
  /** The state, updated in place (replaced slot tensors are disposed). */
  readonly state: OptimizerState;
  /** The parameters held in float16. */
  readonly half: ReadonlySet<string>;
  /** How float16 values are rounded on the device. */
  readonly rounding: Float16Rounding;
  /** The scalars the formulas multiply by, kept between steps. */
  readonly scalars: ScalarConstants;
}

/** Resolves an optimizer target into the variables it trains. */
function targetVariables(target: OptimizerTarget, where: string): tf.Variable[] {
  if (isLayersModel(target)) return trainableVariables(target)!;
  if (Array.isArray(target) && target.every((v) => v instanceof tf.Variable)) return [...target];
  throw new PoptfjsError(`${where}: an optimizer takes a tf.LayersModel or an array of tf.Variable to train`, { type: 'optimizer' });
}

/** The attribute shapes of an optimizer class. */
export interface OptimizerShapes {
  /** Attributes each parameter group has (torch's hyper-parameters). */
  readonly group: HyperShape;
  /** Attributes with one value for the whole optimizer. */
  readonly global: HyperShape;
}

/**
 * The base class of poptfjs optimizers. `Optimizer` without type arguments
 * stands for any of them.
 */
// biome-ignore lint/suspicious/noExplicitAny: `Optimizer` without type arguments accepts every optimizer class; GroupValues would not (ParamGroup's params fail its index signature).
export abstract class Optimizer<G extends GroupValues = any, O extends GlobalValues = any> {
  /** The optimizer's type. */
  readonly type: OptimizerType;
  /** The variables this optimizer trains. */
  readonly variables: readonly tf.Variable[];
  /** The parameter groups: the groups given in `paramGroups`, then one with the variables no group lists. */
  readonly paramGroups: Array<ParamGroup<G>>;
  /** Which attributes are variable (change without recompiling) and which are constant. */
  readonly variableAttrs: VariableAttributes;
  /** The factor the loss is multiplied by before the backward pass (gradients are divided by it before the update). */
  declare lossScaling: number;
  /** The precision gradients are accumulated in over micro-batches and replicas. */
  declare accumType: AccumType;
  readonly #shapes: OptimizerShapes;
  /** The warnings this optimizer gave, so each is given once. */
  readonly #warned = new Set<string>();
  readonly #unexpected = new UnexpectedAttributes();
  #store: OptimizerStateStore | undefined;
  #hostState: OptimizerStateData | undefined;

  /**
   * @param type the optimizer's type
   * @param target what it trains
   * @param options the user's options: attributes and `paramGroups`
   * @param shapes the attributes of this optimizer class, with their defaults
   */
  protected constructor(type: OptimizerType, target: OptimizerTarget, options: unknown, shapes: OptimizerShapes) {
    const where = `optim.${type}`;
    this.type = type;
    this.#shapes = shapes;
    this.variables = targetVariables(target, where);
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw optimizerError(`${where}: options must be an object such as { lr: 0.01 }, got ${options === null ? 'null' : typeof options}`);
    }
    const { paramGroups: specs = [], ...given } = options as { paramGroups?: unknown } & Record<string, unknown>;
    if (!Array.isArray(specs)) throw optimizerError(`${where}: paramGroups must be an array of { params, ...values }`);
    const all = parseHyperValues(where, { ...shapes.group, ...shapes.global }, given, (key) =>
      key === 'params' ? `${where}: params belong in paramGroups entries; pass the variables to train as the first argument` : undefined,
    );
    const defaults: Record<string, HyperValue> = {};
    for (const key of Object.keys(shapes.group)) defaults[key] = all[key]!;
    for (const key of Object.keys(shapes.global)) (this as unknown as Record<string, HyperValue>)[key] = all[key]!;

    const { listed, rest } = splitIntoGroups(where, this.variables, specs as Array<{ params?: unknown }>);
    const explicit = new Set(Object.keys(given));
    this.paramGroups = [];
    (specs as Array<Record<string, unknown>>).forEach((spec, g) => {
      const { params: _params, ...values } = spec;
      Object.keys(values).forEach((key) => explicit.add(key));
      this.paramGroups.push(this.#groupOf(`${where} paramGroups[${g}]`, listed[g]!, { ...defaults, ...values }));
    });
    if (rest.length > 0 || this.paramGroups.length === 0) this.paramGroups.push(this.#groupOf(where, rest, defaults));
    this.variableAttrs = new VariableAttributes(explicit, [...Object.keys(shapes.group), 'lossScaling']);
    for (const key of Object.keys(shapes.group)) this.#defineGroupAccessor(key);
    this.settings();
  }

  #groupOf(where: string, params: tf.Variable[], values: Record<string, unknown>): ParamGroup<G> {
    const checked = parseHyperValues(where, this.#shapes.group, values, (key) =>
      key in this.#shapes.global ? `${where}: ${key} must have one value for all parameter groups; set it in the optimizer's options, not in paramGroups` : undefined,
    );
    return { ...(checked as G), params };
  }

  /** `opt.lr = x` sets `lr` in every group; reading it is an error when the groups differ. */
  #defineGroupAccessor(key: string): void {
    Object.defineProperty(this, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        const first = this.paramGroups[0]![key]!;
        if (this.paramGroups.some((g) => !sameHyperValue(g[key]!, first))) {
          throw optimizerError(`optim.${this.type}: the parameter groups have different values of ${key}; read opt.paramGroups[i].${key}`);
        }
        return first;
      },
      set: (value: HyperValue) => {
        for (const g of this.paramGroups) (g as Record<string, HyperValue>)[key] = value;
      },
    });
  }

  /**
   * A copy of this optimizer, as PopTorch's `copy.copy(optimizer)`: the same
   * type over the same variables and parameter groups, with the current
   * attribute values (checked) and variable attributes, and a copy of any
   * state held on the host (a loaded state dict not yet on a device). It is
   * not attached to an executor: `executor.setOptimizer(copy)` trains on with
   * it from the state the device holds. Attributes the optimizer does not
   * have are not copied.
   */
  clone(): this {
    const settings = this.settings();
    const Type = this.constructor as new (target: OptimizerTarget, options: unknown) => this;
    const copyValue = (value: HyperValue): HyperValue => (Array.isArray(value) ? [...value] : value) as HyperValue;
    const paramGroups = this.paramGroups.map((group, g) => ({
      params: [...group.params],
      ...Object.fromEntries(Object.entries(settings.groups[g]!).map(([key, value]) => [key, copyValue(value as HyperValue)])),
    }));
    const copy = new Type(this.variables, { ...settings.global, paramGroups });
    (copy as { variableAttrs: VariableAttributes }).variableAttrs = this.variableAttrs.clone();
    if (this.#hostState) copy.#hostState = copyOptimizerStateData(this.#hostState);
    return copy;
  }

  /** Names of the trained variables. */
  get parameterNames(): string[] {
    return this.variables.map((v) => v.name);
  }

  /**
   * The current values, checked (an invalid value set since construction is
   * an error here), as a frozen copy. As in PopTorch, an attribute the
   * optimizer does not have, added since construction to a parameter group
   * or to the optimizer (a scheduler's `initialLr`, a `step` count, a
   * group's `lossScaling`), is ignored: silently when it was there when an
   * executor took the optimizer, else with one warning (one debug message
   * when that executor has `Options.relaxOptimizerAttributesChecks(true)`).
   */
  settings(): OptimizerSettings<G, O> {
    const where = `optim.${this.type}`;
    const { group: groupShape, global: globalShape } = this.#shapes;
    const own = Object.fromEntries(this.#ownAttributeKeys().map((key) => [key, undefined]));
    this.#unexpected.without(this.type, { kind: 'optimizer' }, own, (key) => key in groupShape || key in globalShape, [
      ...Object.keys(groupShape),
      ...Object.keys(globalShape),
    ]);
    const globalValues: Record<string, unknown> = {};
    for (const key of Object.keys(globalShape)) globalValues[key] = (this as unknown as Record<string, unknown>)[key];
    const global = Object.freeze(parseHyperValues(where, globalShape, globalValues)) as unknown as O;
    this.checkGlobal(global, where);
    const groups = this.paramGroups.map((group, g) => {
      const { params: _params, ...given } = group;
      const groupWhere = `${where} paramGroups[${g}]`;
      const values = this.#unexpected.without(
        this.type,
        { kind: 'group', group: g },
        given,
        (key) => key in groupShape,
        Object.keys(groupShape),
        (key) => (key in globalShape ? `${key} is not a group attribute: it has one value for the whole optimizer (opt.${key})` : undefined),
      );
      const checked = Object.freeze(parseHyperValues(groupWhere, groupShape, values)) as unknown as G;
      this.checkGroup(global, checked, groupWhere);
      return checked;
    });
    const groupParams = this.paramGroups.map((g) => g.params.map((v) => v.name));
    const groupOf = new Map<string, number>();
    groupParams.forEach((names, g) => names.forEach((n) => groupOf.set(n, g)));
    return Object.freeze({ type: this.type, global, groups, groupParams, groupOf });
  }

  /** The own enumerable keys of this optimizer that hold values (its group accessors and attributes, and any the user added). */
  #ownAttributeKeys(): string[] {
    return Object.keys(this).filter((key) => !OWN_FIELDS.has(key));
  }

  /**
   * @internal An executor takes this optimizer: attributes it does not have
   * are reported as `check` says (a warning, or a debug message under the
   * executor's `relaxOptimizerAttributesChecks`); with `record` (the
   * executor's first optimizer), those present now are ignored silently from
   * now on, as PopTorch records the attributes of the optimizer a model is
   * wrapped with.
   */
  checkUnknownAttributes(check: UnknownAttributeCheck, record = true): void {
    const { group: groupShape, global: globalShape } = this.#shapes;
    const present: Array<{ place: AttributePlace; key: string }> = [];
    for (const key of this.#ownAttributeKeys()) if (!(key in groupShape || key in globalShape)) present.push({ place: { kind: 'optimizer' }, key });
    this.paramGroups.forEach((group, g) => {
      for (const key of Object.keys(group)) if (key !== 'params' && !(key in groupShape)) present.push({ place: { kind: 'group', group: g }, key });
    });
    this.#unexpected.takenBy(check, record, present);
  }

  /**
   * @internal Warns, once, when this optimizer is an instance of a subclass
   * of a built-in one (`class MySGD extends optim.SGD`), as PopTorch warns
   * that such subclasses are unlikely to behave as intended.
   */
  warnIfSubclassed(): void {
    const own = this.constructor as { name: string };
    const builtIn = Object.getPrototypeOf(own) as { name: string } | null;
    if (builtIn === Optimizer || builtIn === null) return;
    this.warnOnce(
      `Optimizer \`${own.name}\` subclassed from optim.${this.type} is unlikely to behave as intended: poptfjs knows it as an optim.${this.type} ` +
        `(its attributes, state dict and exported executables are those of optim.${this.type}) and runs only the update it overrides, never other methods it adds`,
    );
  }

  /** Checks rules between the optimizer attributes; throws (or warns about a value it ignores) with `where`. */
  protected checkGlobal(_global: Readonly<O>, _where: string): void {}

  /** Checks rules between a group's values and the optimizer's (`nesterov` needs momentum, ...); throws with `where`. */
  protected checkGroup(_global: Readonly<O>, _group: Readonly<G>, _where: string): void {}

  /** Logs `message` as a warning the first time this optimizer gives it. */
  protected warnOnce(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    log.warn(message);
  }

  /** The state slots this optimizer keeps per parameter with `settings`. */
  protected abstract slotsOf(settings: OptimizerSettings<G, O>): StateSlot[];

  /** The value every element of slot `slot` starts at with `settings` (default 0: momenta and moments start at zero). */
  protected slotStart(_slot: string, _settings: OptimizerSettings<G, O>): number {
    return 0;
  }

  /** The update formula of one parameter. */
  protected abstract updateParameter(update: ParameterUpdate<G, O>): ParameterResult;

  /** The state slots this optimizer keeps per parameter, with the current values. */
  stateSlots(): StateSlot[] {
    return this.slotsOf(this.settings());
  }

  /** The precision gradients are accumulated in with `settings` (`'parameter'`: the parameter's own). */
  accumulatorPrecision(settings: OptimizerSettings<G, O>): SlotPrecision {
    return settings.global.accumType;
  }

  /**
   * Whether gradient accumulation keeps a tensor of its own per parameter
   * with `settings` (true), or adds the gradients straight into the
   * optimizer state (SGD's combined variant).
   */
  separateAccumulator(_settings: OptimizerSettings<G, O>): boolean {
    return true;
  }

  /** Whether the optimizer clips the gradients to a global norm (a finite `maxGradNorm`). */
  clipsGradients(): boolean {
    const maxNorm = this.settings().global.maxGradNorm;
    return typeof maxNorm === 'number' && maxNorm !== Infinity;
  }

  /**
   * A summary of the hyper-parameters for reports: the optimizer attributes
   * and, for each group attribute, its largest value (or `true` if any group
   * sets it) over the parameter groups; `betas` as `beta1` and `beta2`.
   */
  hyperParameters(): Record<string, number | boolean> {
    const settings = this.settings();
    const summary: Record<string, number | boolean> = {};
    const add = (key: string, value: HyperValue) => {
      if (Array.isArray(value)) {
        value.forEach((v, i) => add(`beta${i + 1}`, v));
      } else if (typeof value === 'number') {
        summary[key] = Math.max(value, (summary[key] as number | undefined) ?? -Infinity);
      } else if (typeof value === 'boolean') {
        summary[key] = value || summary[key] === true;
      }
    };
    for (const [key, value] of Object.entries(settings.global)) add(key, value);
    for (const group of settings.groups) for (const [key, value] of Object.entries(group)) add(key, value);
    return summary;
  }

  /**
   * @internal Applies one update with `settings` to a batch: returns the new
   * weight of each parameter in `batch.grads` (rounded to float16 for float16
   * parameters) and updates `batch.state` in place.
   */
  apply(batch: ParameterBatch, settings: OptimizerSettings<G, O>): Map<string, tf.Tensor> {
    const slots = this.slotsOf(settings);
    const precisions = new Map(slots.map((s) => [s.name, s.precision]));
    const step = batch.state.step + 1;
    const clip = this.clipFactor(batch.grads, settings);
    const updated = new Map<string, tf.Tensor>();
    const scalar = (value: number) => batch.scalars.of(value);
    try {
      for (const [name, grad] of batch.grads) {
        const half = batch.half.has(name);
        const weight = batch.weights.get(name)!;
        const previous: ParameterState = { ...batch.state.slots.get(name) };
        for (const slot of slots) previous[slot.name] ??= tf.fill(weight.shape, this.slotStart(slot.name, settings));
        const group = settings.groups[settings.groupOf.get(name)!]!;
        const stored = (slot: string, value: tf.Tensor) => {
          const precision = precisions.get(slot);
          if (precision === undefined) throw new RangeError(`optim.${this.type} has no state slot '${slot}'`);
          return precision === 'float16' || (precision === 'parameter' && half) ? batch.rounding.round(value) : value;
        };
        const result = tf.tidy(() => {
          const g = clip ? tf.mul(grad, clip) : grad;
          const r = this.updateParameter({ weight, grad: g, slots: previous, group, global: settings.global, step, stored, scalar });
          return { weight: r.weight, slots: r.slots };
        });
        // A slot the update leaves alone (a group without momentum, ...) keeps its value.
        const next = { ...previous, ...result.slots };
        for (const [slot, t] of Object.entries(previous)) if (next[slot] !== t) t.dispose();
        batch.state.slots.set(name, next);
        updated.set(name, half ? batch.rounding.replace(result.weight) : result.weight);
      }
    } finally {
      clip?.dispose();
    }
    batch.state.step = step;
    return updated;
  }

  /** The factor gradients are clipped by (`maxGradNorm`: PopART's `maxNorm / max(norm, maxNorm)` over the batch), if any. */
  private clipFactor(grads: ReadonlyMap<string, tf.Tensor>, settings: OptimizerSettings<G, O>): tf.Tensor | undefined {
    const maxNorm = settings.global.maxGradNorm;
    if (typeof maxNorm !== 'number' || maxNorm === Infinity || grads.size === 0) return undefined;
    return tf.tidy(() => {
      const squares = [...grads.values()].map((g) => tf.sum(tf.square(g)));
      const norm = tf.sqrt(tf.addN(squares));
      return tf.div(maxNorm, tf.maximum(norm, maxNorm));
    });
  }

  /**
   * The state before the first step, as an executor holds it once compiled:
   * step 0 and, for each parameter it trains in `shapes` (the shape of each
   * parameter on the device, by name), every slot at its start value (zeros
   * for momenta and moments; see each optimizer).
   */
  initialState(shapes: ReadonlyMap<string, readonly number[]>): OptimizerStateRecord {
    const settings = this.settings();
    const slots = this.slotsOf(settings);
    const trained = new Set(this.parameterNames);
    const record: Record<string, Record<string, TensorData>> = {};
    for (const [name, shape] of shapes) {
      if (!trained.has(name)) continue;
      const size = shape.reduce((n, d) => n * d, 1);
      record[name] = Object.fromEntries(slots.map((s) => [s.name, { shape: [...shape], data: new Float32Array(size).fill(this.slotStart(s.name, settings)) }]));
    }
    return { step: 0, slots: record };
  }

  /**
   * The optimizer's state dict: its type, attributes, parameter groups, the
   * loss scale in use and the state the device holds (read from the device
   * of the executor training with it, if any). Plain data with typed arrays.
   */
  stateDict(): OptimizerStateDict {
    const settings = this.settings();
    const data = this.#store?.readOptimizerState() ?? (this.#hostState ? copyOptimizerStateData(this.#hostState) : { lossScale: settings.global.lossScaling, states: {} });
    return {
      format: OPTIMIZER_STATE_DICT_FORMAT,
      version: OPTIMIZER_STATE_DICT_VERSION,
      type: this.type,
      attributes: { ...settings.global },
      paramGroups: settings.groups.map((g, i) => ({ params: [...settings.groupParams[i]!], ...g })),
      lossScale: data.lossScale,
      states: data.states,
    };
  }

  /**
   * Loads a state dict from {@link Optimizer.stateDict} of an optimizer of
   * the same type over the same variables: its attribute values, and its
   * state, written to the device of the executor training with this
   * optimizer, or kept until an executor compiles with it.
   */
  loadStateDict(stateDict: unknown): void {
    const where = `optim.${this.type}.loadStateDict`;
    const sd = parseOptimizerStateDict(where, stateDict);
    if (sd.type !== this.type) throw optimizerError(`${where}: the state dict is of an optim.${sd.type}; this optimizer is an optim.${this.type}`);
    const names = this.paramGroups.map((g) => g.params.map((v) => v.name).join(', '));
    const theirs = sd.paramGroups.map((g) => [...g.params].join(', '));
    if (names.length !== theirs.length || names.some((n, i) => n !== theirs[i])) {
      throw optimizerError(
        `${where}: the state dict's parameter groups [${theirs.map((n) => `[${n}]`).join(', ')}] differ from this optimizer's [${names.map((n) => `[${n}]`).join(', ')}]`,
      );
    }
    const global = parseHyperValues(`${where} attributes`, this.#shapes.global, sd.attributes);
    const groups = sd.paramGroups.map((g, i) => {
      const { params: _params, ...values } = g;
      return parseHyperValues(`${where} paramGroups[${i}]`, this.#shapes.group, values);
    });
    this.checkState(where, sd, { ...this.settings(), global: global as unknown as O, groups: groups as unknown as G[] });
    Object.assign(this, global);
    groups.forEach((values, i) => Object.assign(this.paramGroups[i]!, values));
    const data: OptimizerStateData = { lossScale: sd.lossScale, states: sd.states };
    if (this.#store) this.#store.writeOptimizerState(data);
    else this.#hostState = data;
  }

  /** Checks the slots of a state dict against the slots and (unsplit) parameter shapes of `settings`. */
  private checkState(where: string, sd: OptimizerStateDict, settings: OptimizerSettings<G, O>): void {
    const slots = new Set(this.slotsOf(settings).map((s) => s.name));
    const shapes = new Map(this.variables.map((v) => [v.name, v.shape]));
    for (const [key, record] of Object.entries(sd.states)) {
      for (const [param, paramSlots] of Object.entries(record.slots)) {
        if (!shapes.has(param)) throw optimizerError(`${where}: state '${key}' holds parameter '${param}', which this optimizer does not train`);
        for (const [slot, t] of Object.entries(paramSlots)) {
          if (!slots.has(slot)) {
            throw optimizerError(
              `${where}: parameter '${param}' has state slot '${slot}', which optim.${this.type} with these values does not keep (it keeps ${[...slots].join(', ') || 'no state'})`,
            );
          }
          const shape = shapes.get(param)!;
          if (key === '' && (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i]))) {
            throw optimizerError(`${where}: slot '${slot}' of parameter '${param}' has shape [${t.shape.join(',')}], but the parameter has shape [${shape.join(',')}]`);
          }
        }
      }
    }
  }

  /**
   * @internal An executor trains with this optimizer: its state lives on
   * `store` from now on. A loaded state dict goes there, or else `initial`
   * (the state before the first step) if given.
   */
  attachStateStore(store: OptimizerStateStore, initial?: OptimizerStateData): void {
    const state = this.#hostState ?? initial;
    if (state) store.writeOptimizerState(state);
    this.#hostState = undefined;
    this.#store = store;
  }

  /** @internal The executor behind `store` stops (it is destroyed, or uses another optimizer): keep a host copy of its state. */
  detachStateStore(store: OptimizerStateStore): void {
    if (this.#store !== store) return;
    this.#hostState = store.readOptimizerState();
    this.#store = undefined;
  }
}
