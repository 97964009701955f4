/**
 * Optimizer state dicts: what `opt.stateDict()` returns and
 * `opt.loadStateDict(sd)` takes. A state dict is plain data: the optimizer's
 * type, its attributes and parameter groups (hyper-parameter values), the
 * loss scale in use, and the state the device holds (step counts and slot
 * tensors as typed arrays). Typed arrays may be replaced by number arrays
 * (as after `JSON.stringify` with a replacer that turns them into arrays),
 * and Infinity (no limit, as in `maxGradNorm`) and NaN by `null`.
 */
import { z } from 'zod';
import { sizeOf } from '../lib/ir/graph.js';
import type { HyperValue } from './optimizer_options.js';
import { optimizerError } from './optimizer_options.js';
import type { OptimizerStateData, OptimizerStateRecord } from './optimizer_state.js';

/** The `format` of a poptfjs optimizer state dict. */
export const OPTIMIZER_STATE_DICT_FORMAT = 'poptfjs.optimizer-state';
/** The version of the state dict layout. */
export const OPTIMIZER_STATE_DICT_VERSION = 1;

/** A parameter group in a state dict: the names of its variables and its values. */
export type StateDictParamGroup = { readonly params: readonly string[] } & Readonly<Record<string, HyperValue | readonly string[]>>;

/** An optimizer's state dict. */
export interface OptimizerStateDict extends OptimizerStateData {
  readonly format: typeof OPTIMIZER_STATE_DICT_FORMAT;
  readonly version: typeof OPTIMIZER_STATE_DICT_VERSION;
  /** The optimizer type (`'SGD'`, `'Adam'`, ...). */
  readonly type: string;
  /** The attributes set for the whole optimizer (`lossScaling`, `accumType`, ...). */
  readonly attributes: Readonly<Record<string, HyperValue>>;
  /** The parameter groups and their hyper-parameter values. */
  readonly paramGroups: readonly StateDictParamGroup[];
}

const tensorData = z
  .object({
    shape: z.array(z.number().int().nonnegative()),
    data: z.union([z.instanceof(Float32Array), z.array(z.number().nullable())]),
  })
  .transform((t, ctx) => {
    const size = sizeOf(t.shape);
    if (t.data.length !== size) {
      ctx.addIssue({ code: 'custom', message: `has ${t.data.length} values for shape [${t.shape.join(',')}] (${size} values)` });
      return z.NEVER;
    }
    const data = t.data instanceof Float32Array ? Float32Array.from(t.data) : Float32Array.from(t.data, (x) => (x === null ? NaN : x));
    return { shape: t.shape, data };
  });

const stateRecord = z.object({
  step: z.number().int().nonnegative(),
  slots: z.record(z.string(), z.record(z.string(), tensorData)),
});

/** A hyper-parameter value; `null` is Infinity (no limit), as JSON writes it. */
const hyperValue = z.union([
  z.number(),
  z.literal(Infinity),
  z.null().transform(() => Infinity),
  z.boolean(),
  z.tuple([z.number(), z.number()]),
  z.enum(['float32', 'float16']),
]);

const stateDictSchema = z.object({
  format: z.literal(OPTIMIZER_STATE_DICT_FORMAT),
  version: z.literal(OPTIMIZER_STATE_DICT_VERSION),
  type: z.string(),
  attributes: z.record(z.string(), hyperValue),
  paramGroups: z.array(z.looseObject({ params: z.array(z.string()) })),
  lossScale: z.number().positive(),
  states: z.record(z.string(), stateRecord),
});

/** Checks the layout of a state dict (not yet that it fits an optimizer) and copies its data. */
export function parseOptimizerStateDict(where: string, value: unknown): OptimizerStateDict {
  const result = stateDictSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : 'the state dict';
    throw optimizerError(`${where}: not a poptfjs optimizer state dict (from opt.stateDict()): ${path} ${issue.message.replace(/^Invalid input: /, '')}`);
  }
  const d = result.data;
  const states: Record<string, OptimizerStateRecord> = d.states;
  return {
    format: d.format,
    version: d.version,
    type: d.type,
    attributes: d.attributes,
    paramGroups: d.paramGroups as StateDictParamGroup[],
    lossScale: d.lossScale,
    states,
  };
}

/** A deep copy of state data (typed arrays copied), so callers cannot change what another holder keeps. */
export function copyOptimizerStateData(data: OptimizerStateData): OptimizerStateData {
  const states: Record<string, OptimizerStateRecord> = {};
  for (const [key, record] of Object.entries(data.states)) {
    const slots: Record<string, Record<string, { shape: number[]; data: Float32Array }>> = {};
    for (const [param, paramSlots] of Object.entries(record.slots)) {
      slots[param] = Object.fromEntries(Object.entries(paramSlots).map(([slot, t]) => [slot, { shape: [...t.shape], data: Float32Array.from(t.data) }]));
    }
    states[key] = { step: record.step, slots };
  }
  return { lossScale: data.lossScale, states };
}
