/**
 * The optimizer a training model gets when it is given none: the one its
 * `tf.LayersModel` was compiled with, as the poptfjs optimizer taking the
 * same steps (see optim/tfjs_optimizer.ts), or `SGD(lr 0.01)`.
 */
import { isLayersModel, type WrappableModel } from '../trace/model_function.js';
import { SGD } from '../../optim/sgd.js';
import { isTfjsOptimizer, tfjsOptimizerEquivalent, type OptimizerBuilder } from '../../optim/tfjs_optimizer.js';

/** The builder of the optimizer `model` trains with when none is given; `where` names the caller in errors. */
export function defaultOptimizerBuilder(model: WrappableModel, where: string): OptimizerBuilder {
  const compiled: unknown = isLayersModel(model) ? model.optimizer : undefined;
  if (isTfjsOptimizer(compiled)) return tfjsOptimizerEquivalent(compiled, `${where}: the optimizer '${model.name}' was compiled with`);
  return (target) => new SGD(target, { lr: 0.01 });
}
