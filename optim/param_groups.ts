/**
 * Parameter groups: subsets of an optimizer's variables with their own
 * hyper-parameter values (torch's `param_groups`), given as
 * `new optim.SGD(model, { lr: 0.1, paramGroups: [{ params: [kernel], lr: 0.01 }] })`.
 *
 * The groups listed come first, in order; the variables no group lists form
 * one more group, last, with the optimizer's own values.
 */
import * as tf from '@tensorflow/tfjs';
import { optimizerError } from './optimizer_options.js';

/** A variable as a group names it: the tf.Variable, a layers-model weight (`model.getLayer('d').kernel`), or its name. */
export type ParamRef = tf.Variable | tf.LayerVariable | { readonly val: tf.Variable } | string;

/** A parameter group as given in the options: the variables and the values it sets. */
export type ParamGroupSpec<G> = { readonly params: readonly ParamRef[] } & Partial<G>;

/**
 * A parameter group of an optimizer: its variables and hyper-parameter
 * values. Change a value, then call `executor.setOptimizer(opt)` to use it.
 */
export type ParamGroup<G> = G & { readonly params: readonly tf.Variable[] };

function refName(ref: unknown): string | undefined {
  if (typeof ref === 'string') return ref;
  if (ref instanceof tf.Variable) return ref.name;
  const val = (ref as { val?: unknown } | null)?.val;
  return val instanceof tf.Variable ? val.name : undefined;
}

/**
 * Splits `variables` into the groups `specs` list (each spec's `params`
 * resolved to variables) and the rest; `where` names the optimizer in errors.
 */
export function splitIntoGroups(
  where: string,
  variables: readonly tf.Variable[],
  specs: ReadonlyArray<{ readonly params?: unknown }>,
): { listed: tf.Variable[][]; rest: tf.Variable[] } {
  const byName = new Map(variables.map((v) => [v.name, v]));
  const owner = new Map<string, number>();
  const listed = specs.map((spec, g) => {
    if (!Array.isArray(spec.params) || spec.params.length === 0) {
      throw optimizerError(`${where}: paramGroups[${g}].params must be a non-empty array of variables (tf.Variable, layer weights or variable names)`);
    }
    return spec.params.map((ref: unknown, i: number) => {
      const name = refName(ref);
      if (name === undefined) throw optimizerError(`${where}: paramGroups[${g}].params[${i}] is not a tf.Variable, a layer weight or a variable name`);
      const variable = byName.get(name);
      if (!variable) {
        throw optimizerError(
          `${where}: paramGroups[${g}].params[${i}] is '${name}', which the optimizer does not train; its variables are ${[...byName.keys()].map((n) => `'${n}'`).join(', ')}`,
        );
      }
      const previous = owner.get(name);
      if (previous !== undefined) throw optimizerError(`${where}: variable '${name}' is in paramGroups[${previous}] and paramGroups[${g}]; put it in one group`);
      owner.set(name, g);
      return variable;
    });
  });
  return { listed, rest: variables.filter((v) => !owner.has(v.name)) };
}
