/**
 * The optimizer of a training executor: built over the traced weights when
 * none was given, the reduction its gradient accumulator needs, how its
 * unknown attributes are treated, its state reset after a fault, and the
 * checks and state hand-over when `setOptimizer` replaces it.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import type { OptionsSettings } from '../options/options_settings.js';
import type { Executable } from '../executable/executable.js';
import type { Engine } from '../engine/engine.js';
import { isLayersModel, type WrappableModel } from '../trace/model_function.js';
import type { TracedModel } from '../trace/trace_model.js';
import type { CompiledOptimizerAttributes } from '../../optim/compiled_attributes.js';
import { Optimizer } from '../../optim/optimizer.js';
import { isTfjsOptimizer, tfjsOptimizerEquivalent, type OptimizerBuilder } from '../../optim/tfjs_optimizer.js';
import type { UnknownAttributeCheck } from '../../optim/unknown_attributes.js';
import { defaultOptimizerBuilder } from './default_optimizer.js';
import type { ExecutionSettings } from '../compile/execution_settings.js';
import { initialOptimizerState } from './initial_optimizer_state.js';

const log = getLogger('poptfjs');

/** How an executor's optimizer reports attributes it does not have (and ignores): a warning, or a debug message under `relaxOptimizerAttributesChecks`. */
export function unknownAttributeCheck(settings: Pick<OptionsSettings, 'relaxOptimizerAttributesChecks'>): UnknownAttributeCheck {
  return settings.relaxOptimizerAttributesChecks ? 'debug' : 'warn';
}

/**
 * A training executor takes `optimizer` (the one it was given): the
 * attributes the optimizer does not have are reported as the options say
 * (those present now ignored silently), and a subclass of a built-in
 * optimizer is warned about, as PopTorch warns.
 */
export function takeOptimizer(optimizer: Optimizer | undefined, settings: Pick<OptionsSettings, 'relaxOptimizerAttributesChecks'>): void {
  optimizer?.checkUnknownAttributes(unknownAttributeCheck(settings));
  optimizer?.warnIfSubclassed();
}

/**
 * The optimizer a training executor without one builds over the traced
 * model's trainable weights: `builder`'s (a given tfjs optimizer's
 * equivalent), else the one its layers model was compiled with, else
 * `SGD(lr 0.01)`.
 */
export function buildOptimizer(model: WrappableModel, builder: OptimizerBuilder | undefined, traced: TracedModel, check: UnknownAttributeCheck): Optimizer {
  const trainable = [...traced.variables.values()].filter((v) => v.trainable);
  const build = builder ?? defaultOptimizerBuilder(model, 'trainingModel');
  const optimizer = build(isLayersModel(model) ? model : trainable);
  optimizer.checkUnknownAttributes(check);
  return optimizer;
}

/**
 * The execution settings with the reduction the optimizer needs: as in
 * PopTorch, a float16 gradient accumulator (`accumType: 'float16'`, not
 * SGD's combined variant) makes a Mean reduction keep a Running mean,
 * whatever strategy the options set, so the accumulator holds a mean
 * (bounded by the largest micro-batch gradient) rather than a sum that can
 * overflow float16.
 */
export function optimizerReduction(optimizer: Optimizer | undefined, execution: ExecutionSettings): ExecutionSettings {
  const { reduction } = execution;
  if (!optimizer || reduction.type !== 'Mean' || reduction.strategy === 'Running') return execution;
  if (optimizer.accumulatorPrecision(optimizer.settings()) !== 'float16') return execution;
  log.info(`optim.${optimizer.type} accumulates gradients in float16 (accumType): the mean reduction strategy is Running instead of ${reduction.strategy}`);
  return { ...execution, reduction: { ...reduction, strategy: 'Running' } };
}

/** Starts the optimizer state on the device afresh, as after compiling (a fault lost it); without an optimizer, discards it. */
export function resetOptimizerState(engine: Engine, executable: Executable, optimizer: Optimizer | undefined): void {
  if (optimizer) engine.writeOptimizerState(initialOptimizerState(optimizer, executable, engine.lossScale));
  else engine.discardOptimizerState();
}

/**
 * The poptfjs optimizer `setOptimizer(given)` installs: `given` itself, or
 * for a tfjs optimizer (`tf.train.adam(5e-4)`), its poptfjs equivalent over
 * the variables the executor's optimizer trains (`current`), or over the
 * layers model before the first compilation, as PopTorch's `setOptimizer`
 * takes a torch optimizer. A function model's variables are known once it is
 * traced: before that, a tfjs optimizer is an error saying so.
 */
export function replacementOptimizer(given: Optimizer | tf.Optimizer, current: Optimizer | undefined, model: WrappableModel): Optimizer {
  if (!isTfjsOptimizer(given)) return given;
  const build = tfjsOptimizerEquivalent(given, 'setOptimizer');
  if (current) return build(current.variables);
  if (isLayersModel(model)) return build(model);
  throw new PoptfjsError(
    "setOptimizer: a tfjs optimizer trains the variables of the model's optimizer, which a function model has once it is compiled; compile the model first, or pass a poptfjs optimizer over the variables (new optim.Adam([w1, w2], { lr }))",
    { type: 'executor' },
  );
}

/**
 * Checks that `optimizer` may replace a training executor's (`training`):
 * a poptfjs optimizer, which after compilation (`compiled`) changes only
 * variable attributes. Its attributes it does not have are reported as
 * `check` says, those added since the executor took its first optimizer
 * included.
 */
export function checkReplacementOptimizer(training: boolean, optimizer: Optimizer, check: UnknownAttributeCheck, compiled: CompiledOptimizerAttributes | undefined): void {
  if (!training) throw new PoptfjsError('setOptimizer: an inference model has no optimizer', { type: 'executor' });
  if (!(optimizer instanceof Optimizer)) {
    throw new PoptfjsError('setOptimizer: expected a poptfjs optimizer (e.g. new optim.SGD(model, { lr }))', { type: 'executor' });
  }
  optimizer.checkUnknownAttributes(check, false);
  optimizer.warnIfSubclassed();
  if (compiled) compiled.check(optimizer);
  else optimizer.settings();
}

/** Makes the engine (if any) train with `next` from its next call on, handing it the device's optimizer state `previous` held. */
export function switchOptimizer(engine: Engine | undefined, previous: Optimizer | undefined, next: Optimizer): void {
  if (engine && next !== previous) previous?.detachStateStore(engine);
  if (engine) {
    engine.setOptimizer(next);
    next.attachStateStore(engine);
  }
}
