/**
 * `MultiConv`: PopTorch's `poptorch.MultiConv`, a scope whose independent
 * convolutions are planned together, to run in parallel on shares of the
 * tiles.
 */
import { PartialsType } from '../lib/option_vocabulary/enums.js';
import { DEFAULT_CYCLE_BACK_OFF, type MultiConvPlanType as PlanType } from '../lib/ir/graph.js';
import { currentRecorder } from '../lib/trace/kernel_recorder.js';
import { closeMultiConv, openMultiConv, type MultiConvSettings } from '../lib/trace/multi_conv_scope.js';
import { argumentError } from './arguments/dynamic_offset.js';

const OP = 'MultiConv';

/** How the convolutions of a {@link MultiConv} run (PopTorch's `poptorch.MultiConvPlanType`). */
export const MultiConvPlanType = {
  /** At the same time, each on its own share of the tiles (the default). */
  Parallel: 'Parallel',
  /** One after another, each on all the tiles: as without the scope. */
  Serial: 'Serial',
} as const satisfies Record<string, PlanType>;
/** A member of {@link MultiConvPlanType}. */
export type MultiConvPlanType = PlanType;

/** Tiles each convolution of a parallel group is given first (poplibs' default `perConvReservedTiles`). */
const DEFAULT_PER_CONV_RESERVED_TILES = 50;

const PLAN_TYPES: readonly string[] = Object.values(MultiConvPlanType);
const PARTIALS_TYPES: readonly string[] = Object.values(PartialsType);

function shown(value: unknown): string {
  return value === undefined ? 'undefined' : typeof value === 'function' ? 'a function' : JSON.stringify(value);
}

/** `value` as a non-empty list of values that pass `valid`, or undefined if it is not one (a single value is a list of one). */
function perConvolution<T>(value: unknown, valid: (x: unknown) => x is T): T[] | undefined {
  const values = Array.isArray(value) ? (value as unknown[]) : [value];
  return values.length > 0 && values.every(valid) ? values : undefined;
}

const isProportion = (x: unknown): x is number => typeof x === 'number' && x > 0 && x <= 1;
const isPartialsType = (x: unknown): x is PartialsType => typeof x === 'string' && PARTIALS_TYPES.includes(x);
const isBoolean = (x: unknown): x is boolean => typeof x === 'boolean';

/**
 * A multi-convolution: the convolutions traced inside it (`tf.conv2d`,
 * `tf.conv3d`, depthwise and fused convolutions, convolution layers) form a
 * group, and so do their backward convolutions in training, as
 * `with poptorch.MultiConv():` folds them into one PopART `MultiConv`. The
 * numbers are those of the convolutions without the scope; what changes is
 * how the simulated IPU plans them:
 *
 * - `Parallel` (the default): the group's convolutions run at the same time,
 *   each on its own tiles, shared out as poplibs' multi-plan does: the
 *   largest convolution (by FLOPs) takes the fewest tiles on which it runs
 *   within its `cycleBackOff` of its fastest plan, the others keep
 *   `perConvReservedTiles` each until they take the fewest on which they
 *   match it, the second largest the rest; the group takes as long as its
 *   slowest convolution and holds all their temporary memory at once. When
 *   the tiles cannot give every convolution one, the group is planned
 *   serially, as poplibs falls back to serial planning.
 * - `Serial`: one after another on all the tiles, as without the scope.
 *
 * `availableMemoryProportions` and `partialsTypes` set each convolution's
 * (and its backward convolutions') temporary-memory proportion and partials
 * type, one value for all or one per convolution in the order they run.
 * `enableConvDithering` lays a convolution out from a start tile its shape
 * picks, as poplibs' dithering does ({@link MultiConv.enableConvDithering}).
 *
 * Configure with the chained setters, then run the convolutions in
 * {@link MultiConv.run}, or in a block after `using _ = multiConv.enter()`.
 * A configured object can be entered again (each time a new group, as in a
 * model's `call`). Multi-convolutions do not nest, and a scope in which no
 * convolution ran is an error when traced.
 */
export class MultiConv implements Disposable {
  private settings: MultiConvSettings = {
    planType: MultiConvPlanType.Parallel,
    perConvReservedTiles: DEFAULT_PER_CONV_RESERVED_TILES,
    cycleBackOff: DEFAULT_CYCLE_BACK_OFF,
  };
  private entered = false;

  /**
   * The proportion of a tile's memory, in (0, 1], each convolution may use
   * for temporaries (as `ops.setAvailableMemory`): one number for all of them,
   * or a list with one per convolution.
   */
  availableMemoryProportions(value: number | readonly number[]): this {
    const values = perConvolution(value, isProportion);
    if (!values)
      throw argumentError(OP, `Invalid available memory proportion! Expected a number in (0, 1] or a non-empty list of them (one per convolution), got ${shown(value)}`);
    this.settings = { ...this.settings, availableMemoryProportions: values };
    return this;
  }

  /**
   * The type of each convolution's partial sums, `'float'` or `'half'`
   * (`PartialsType`): one for all of them, or a list with one per
   * convolution. As `Precision.setPartialsType` does for the whole model,
   * `'half'` keeps the running sums of float16 convolutions in float16 (the
   * numbers, and the planner's partials bytes and AMP rate); float32
   * convolutions are not affected.
   */
  partialsTypes(value: PartialsType | readonly PartialsType[]): this {
    const values = perConvolution(value, isPartialsType);
    if (!values)
      throw argumentError(OP, `Invalid partials types. Expecting 'float' or 'half' (PartialsType.Float, PartialsType.Half) or a non-empty list of them, got ${shown(value)}`);
    this.settings = { ...this.settings, partialsTypes: values };
    return this;
  }

  /** How the group runs: `MultiConvPlanType.Parallel` (default) or `MultiConvPlanType.Serial`. */
  planType(value: MultiConvPlanType): this {
    if (!PLAN_TYPES.includes(value as string))
      throw argumentError(OP, `Invalid plan type! Expected MultiConvPlanType.Parallel or MultiConvPlanType.Serial, got ${shown(value)}`);
    this.settings = { ...this.settings, planType: value };
    return this;
  }

  /** Tiles each convolution of a parallel group is given before the rest are shared out (default 50, poplibs'). */
  perConvReservedTiles(value: number): this {
    if (!Number.isInteger(value) || value < 0) throw argumentError(OP, `perConvReservedTiles must be a non-negative integer (tiles per convolution), got ${shown(value)}`);
    this.settings = { ...this.settings, perConvReservedTiles: value };
    return this;
  }

  /**
   * poplibs' cycle back-off of a parallel group (default 0.1): the largest
   * convolution is planned on the fewest tiles on which it runs within
   * `1 + (convolutions - 1) · cycleBackOff` times its fastest plan, leaving
   * the other tiles to the other convolutions (lib/poplin/ConvPlan.cpp,
   * `getParallelMultiPlan`; see lib/ipu/multi_conv_plan.ts). A number from
   * 0 to 1.
   */
  cycleBackOff(value: number): this {
    if (typeof value !== 'number' || !(value >= 0 && value <= 1)) throw argumentError(OP, `cycleBackOff must be a number between 0 and 1, got ${shown(value)}`);
    this.settings = { ...this.settings, cycleBackOff: value };
    return this;
  }

  /**
   * poplibs' convolution dithering (`enableConvDithering`), for all the
   * convolutions or one value per convolution: a dithered convolution is laid
   * out from a start tile and in a direction picked from its shape, instead of
   * from tile 0 up, so convolutions of different shapes that use part of the
   * tiles do not stack their weights on the same tiles (the memory plan's
   * `convolutionWeightsPerTile`; lib/ipu/conv_dithering.ts). As in poplibs,
   * a parallel group of several convolutions cannot be dithered ("Unsupported
   * conv dithering with multi plans"): use `planType(Serial)`.
   */
  enableConvDithering(value: boolean | readonly boolean[]): this {
    const values = perConvolution(value, isBoolean);
    if (!values) throw argumentError(OP, `enableConvDithering: value must be bool or list of bools, got ${shown(value)}`);
    this.settings = { ...this.settings, enableConvDithering: values };
    return this;
  }

  /** Runs `fn` in the scope and returns its result; the scope closes also when `fn` throws. */
  run<T>(fn: () => T): T {
    this.enter();
    let ok = false;
    try {
      const result = fn();
      ok = true;
      return result;
    } finally {
      this.close(ok);
    }
  }

  /** Opens the scope until this object is disposed (`using _ = multiConv.enter()`); returns this object. */
  enter(): this {
    openMultiConv(currentRecorder()?.builder);
    this.entered = true;
    return this;
  }

  /** Closes the scope opened by {@link MultiConv.enter}: the convolutions traced since form the group. Closing it again does nothing. */
  [Symbol.dispose](): void {
    this.close(true);
  }

  private close(annotate: boolean): void {
    if (!this.entered) return;
    this.entered = false;
    closeMultiConv(this.settings, annotate);
  }
}
