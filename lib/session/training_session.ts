/**
 * `TrainingSession`: trains an ONNX model on a device, as PopART's: the loss
 * is a tensor of the graph (e.g. from `builder.aiGraphcore.nllloss`), every
 * floating-point weight the loss depends on is trained (but batch-norm
 * running statistics) with the optimizer given in PopART's form, and each
 * batch of a step ends with a weight update (see {@link Session}).
 *
 * ```ts
 * const session = await TrainingSession.create({
 *   model: builder.getModelProto(), dataFlow, loss, optimizer: new ConstSGD(0.001), deviceInfo,
 * });
 * ```
 */
import type * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { PopartException, PopartRuntimeError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import type { ImportedModel } from '../onnx/model_import.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { checkedArgument } from './checked_argument.js';
import { PopartOptimizer } from './popart_optimizer.js';
import { Session } from './session.js';
import { sessionArguments, type PopartArguments, type SessionArguments, type SessionSetup } from './session_arguments.js';

const log = getLogger('session');

/** What a training session is created with. */
export interface TrainingSessionArguments extends SessionArguments {
  /** The name of the loss tensor to minimise. */
  readonly loss: string;
  /** The optimizer: `SGD`, `ConstSGD`, `Adam` or `Adaptive`. */
  readonly optimizer: PopartOptimizer;
}

const trainingSchema = z.object({
  loss: z.string().min(1),
  optimizer: z.custom<PopartOptimizer>((value) => value instanceof PopartOptimizer, { message: 'expected a PopART optimizer: SGD, ConstSGD, Adam or Adaptive' }),
});

/** The trained weights' host variables by ONNX name. */
function trainedWeights(imported: ImportedModel): Map<string, tf.Variable> {
  const trained = new Set(Object.keys(imported.graph.roles.gradients ?? {}));
  const weights = new Map<string, tf.Variable>();
  for (const [name, param] of imported.parameterNames) if (trained.has(param)) weights.set(name, imported.variables.get(param)!);
  return weights;
}

/** A session that trains a model. */
export class TrainingSession extends Session {
  #optimizer: PopartOptimizer;
  #trained: ReadonlyMap<string, tf.Variable>;
  #poptfjsOptimizer: Optimizer;

  private constructor(setup: SessionSetup, imported: ImportedModel, optimizer: PopartOptimizer) {
    super(setup, imported);
    this.#trained = trainedWeights(imported);
    if (this.#trained.size === 0) {
      throw new PopartException(`TrainingSession.create: the loss '${setup.loss}' depends on no floating-point weight of the model; there is nothing to train`);
    }
    this.#optimizer = optimizer;
    this.#poptfjsOptimizer = optimizer.toOptimizer(this.#trained);
  }

  /**
   * Imports the model with its loss and gradients and places it; compile and
   * load it with `prepareDevice()`. PopART's argument names are understood
   * (`fnModel`, `dataFeed`); any other unknown one is an error.
   */
  static async create(given: PopartArguments<TrainingSessionArguments>): Promise<TrainingSession> {
    const args = sessionArguments<TrainingSessionArguments>(given, 'TrainingSession.create', ['loss', 'optimizer']);
    const { loss, optimizer } = checkedArgument(trainingSchema, args, 'TrainingSession.create');
    const setup = { args, kind: 'training' as const, loss };
    const imported = await Session.importFor(setup, 'TrainingSession.create');
    try {
      return new TrainingSession(setup, imported, optimizer);
    } catch (error) {
      imported.dispose();
      throw error;
    }
  }

  protected override trainingOptimizer(): Optimizer {
    return this.#poptfjsOptimizer;
  }

  /** The names of the weights the session trains. */
  getTrainedWeightIds(): string[] {
    return [...this.#trained.keys()];
  }

  /**
   * Trains with `optimizer`'s values from the next run on. It must be of the
   * same kind and mode as the session's and keep its constant values: only
   * the values created as `[value, false]` can change.
   */
  updateOptimizerFromHost(optimizer: PopartOptimizer): void {
    this.engine?.setOptimizer(this.replaceOptimizer(optimizer, 'updateOptimizerFromHost'));
    log.debug('updated the optimizer from the host');
  }

  /**
   * Sets the optimizer on the host, as PopART's older `updateOptimizer`: the
   * device trains with its values after `optimizerFromHost()` (or once
   * `prepareDevice()` loads it). The same rules as
   * {@link TrainingSession.updateOptimizerFromHost} apply.
   */
  updateOptimizer(optimizer: PopartOptimizer): void {
    this.engine?.setHostOptimizer(this.replaceOptimizer(optimizer, 'updateOptimizer'));
  }

  /** Copies the host optimizer's values to the device, as PopART's older `optimizerFromHost()`: runs the engine's `optimizerFromHost` program. */
  optimizerFromHost(): void {
    const engine = this.engine;
    if (!engine) throw new PopartRuntimeError('optimizerFromHost: the device is not prepared; call prepareDevice() first');
    engine.run(engine.programIndex('optimizerFromHost'));
    log.debug('copied the optimizer from the host');
  }

  /** Makes `optimizer` the session's, after checking it may replace the current one; returns its poptfjs optimizer. */
  private replaceOptimizer(optimizer: PopartOptimizer, where: string): Optimizer {
    const checked = checkedArgument(trainingSchema.shape.optimizer, optimizer, where);
    const problem = this.#optimizer.replacementProblem(checked);
    if (problem) throw new PopartException(`${where}: ${problem}`);
    const poptfjs = checked.toOptimizer(this.#trained);
    this.#optimizer = checked;
    this.#poptfjsOptimizer = poptfjs;
    return poptfjs;
  }
}
