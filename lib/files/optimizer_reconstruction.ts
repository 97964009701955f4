/**
 * Building an optimizer again from its recorded configuration (see
 * lib/files/optimizer_config.ts) over another model's variables: the same
 * type, attribute values, parameter groups and variable attributes.
 */
import type * as tf from '@tensorflow/tfjs';
import * as optim from '../../optim/index.js';
import { Optimizer } from '../../optim/optimizer.js';
import { PoptfjsError } from '../common/errors.js';
import type { OptimizerConfig } from './optimizer_config.js';

type OptimizerConstructor = new (target: readonly tf.Variable[], options: Record<string, unknown>) => Optimizer;

/** The optimizer class called `type` (`SGD`, `Adam`, ...). */
function optimizerClass(type: string, where: string): OptimizerConstructor {
  const candidate = (optim as Record<string, unknown>)[type];
  if (typeof candidate !== 'function' || !(candidate.prototype instanceof Optimizer)) {
    throw new PoptfjsError(`${where}: the optimizer optim.${type} is not one this poptfjs has`, { type: 'optimizer' });
  }
  return candidate as OptimizerConstructor;
}

/**
 * An optimizer like `config` training the variables `variableOf` names (the
 * config's parameter names are looked up through it); `where` names the file
 * in errors.
 */
export function rebuildOptimizer(config: OptimizerConfig, variableOf: (name: string) => tf.Variable | undefined, where: string): Optimizer {
  const Class = optimizerClass(config.type, where);
  const paramGroups = config.groups.map((group) => ({
    ...group.values,
    params: group.params.map((name) => {
      const variable = variableOf(name);
      if (!variable) throw new PoptfjsError(`${where}: the optimizer trains '${name}', which the model does not have`, { type: 'optimizer' });
      return variable;
    }),
  }));
  const optimizer = new Class(
    paramGroups.flatMap((g) => g.params),
    { ...config.global, paramGroups },
  );
  const variable = new Set(config.variableAttributes);
  for (const name of optimizer.variableAttrs.variableNames()) if (!variable.has(name)) optimizer.variableAttrs.markAsConstant(name);
  for (const name of variable) optimizer.variableAttrs.markAsVariable(name);
  return optimizer;
}
