/**
 * Planning a model without computing it: `plan()` builds the model on the
 * shape-only backend (tensors with shapes and dtypes, no values), traces it
 * as `trainingModel`/`inferenceModel` would, and runs the same compiler, so
 * the memory of every IPU and the simulated timeline come out for a model
 * larger than the host could compute, on as many IPUs as the options ask for,
 * without hardware and without the weights.
 */
import * as tf from '@tensorflow/tfjs';
import { ShapeOnlyBackend } from '../backend/shape_only/shape_only_backend.js';
import { withShapeOnlyBackend } from '../backend/shape_only/shape_only_mode.js';
import { engine } from '../backend/tfjs_internals.js';
import { PoptfjsError } from '../common/errors.js';
import { MAX_DIMENSION } from '../files/layers_topology.js';
import type { MemoryPlan } from '../ipu/memory_plan.js';
import type { Timeline } from '../ipu/timeline.js';
import { Options } from '../options/options.js';
import { float16Declarations } from '../precision/float16_declarations.js';
import { half } from '../precision/half.js';
import { summaryReport } from '../report/summary_report.js';
import { hostBatchSize } from '../executable/batch_plan.js';
import type { Executable } from '../executable/executable.js';
import type { LossSpec } from '../trace/loss_function.js';
import { canonicalLossName, lossNamesText } from '../trace/loss_names.js';
import { isLayersModel, modelName, type WrappableModel } from '../trace/model_function.js';
import { traceInference, traceTraining, type TracedModel } from '../trace/trace_model.js';
import { Adam } from '../../optim/adam.js';
import { AdamW } from '../../optim/adamw.js';
import { LAMB } from '../../optim/lamb.js';
import { Optimizer } from '../../optim/optimizer.js';
import { RMSprop } from '../../optim/rmsprop.js';
import { SGD } from '../../optim/sgd.js';
import { CompileProgress, PLAN_STEPS, progressBar, type ProgressCallback } from '../compile/compile_progress.js';
import { defaultOptimizerBuilder } from './default_optimizer.js';
import { executionSettings } from '../compile/execution_settings.js';
import { compileGraph } from '../compile/graph_compiler.js';

/** What an optimizer of a plan trains: the layers model, or the trainable variables of a function model. */
export type PlanOptimizerTarget = tf.LayersModel | tf.Variable[];

/** The optimizers `plan()` builds by name, with their default hyper-parameters. */
export const PLAN_OPTIMIZERS = {
  sgd: (target: PlanOptimizerTarget) => new SGD(target, { lr: 0.01 }),
  adam: (target: PlanOptimizerTarget) => new Adam(target, { lr: 1e-3 }),
  adamw: (target: PlanOptimizerTarget) => new AdamW(target, { lr: 1e-3 }),
  rmsprop: (target: PlanOptimizerTarget) => new RMSprop(target, { lr: 0.01 }),
  lamb: (target: PlanOptimizerTarget) => new LAMB(target, { lr: 1e-3 }),
} as const;

/** The name of an optimizer `plan()` can build. */
export type PlanOptimizerName = keyof typeof PLAN_OPTIMIZERS;

/** The shape and dtype of one input of the model, for one micro-batch. */
export interface PlanInput {
  /** The shape the model sees: its first dimension is the micro-batch size. */
  readonly shape: readonly number[];
  /** Default `'float32'`; `'float16'` for a float16 input (as `half(tensor)`). */
  readonly dtype?: tf.DataType | 'float16';
}

/** What {@link plan} plans. */
export interface PlanRequest {
  /** Execution options (placement, replication, accumulation, precision, target IPU, ...). */
  readonly options?: Options;
  /** Plan a training step (default: true when a loss, an optimizer or a target is given). */
  readonly training?: boolean;
  /**
   * The optimizer: a name, or a function returning one for the built model
   * (a layers model) or its trainable variables (a function model); default:
   * the optimizer a compiled layers model was compiled with (as for
   * `trainingModel`), else `'sgd'`.
   */
  readonly optimizer?: PlanOptimizerName | ((target: PlanOptimizerTarget) => Optimizer);
  /** The loss, as for `trainingModel`. */
  readonly loss?: LossSpec;
  /** The model's inputs, one micro-batch each. */
  readonly inputs: readonly PlanInput[];
  /** The training target, one micro-batch (with a loss). */
  readonly target?: PlanInput;
  /**
   * Told `(done, total, detail?)` as the plan goes: after each of its steps
   * ({@link PLAN_STEPS}), and while the model is traced, how many kernels are
   * traced so far. `Options.showCompilationProgressBar` draws the same on
   * stderr.
   */
  readonly progress?: ProgressCallback;
}

/** What a model needs on its IPUs, and how fast it would run. */
export interface Plan {
  /** Every IPU's In-Processor memory and streaming memory hold what they must. */
  readonly fits: boolean;
  /** The memory of each IPU of a replica. */
  readonly memory: MemoryPlan;
  /** The simulated timeline of one call. */
  readonly timeline: Timeline;
  /** Samples per second over all replicas. */
  readonly throughput: number;
  /** Samples one call consumes (micro-batch × device iterations × replicas × gradient accumulation). */
  readonly samplesPerCall: number;
  /** Parameters of the model, counted from the traced graph. */
  readonly parameters: number;
  /** The compiled executable (its graph has no constant values: it can be inspected, not run). */
  readonly executable: Executable;
  /** The summary report, as `getSummaryReport()` gives it for a compiled model. */
  summary(): string;
}

/** What `build` may return: a layers model or a function of tensors. */
export type PlanBuild = () => WrappableModel | Promise<WrappableModel>;

function planError(message: string): PoptfjsError {
  return new PoptfjsError(`plan: ${message}`, { type: 'executor' });
}

/** The dtypes of the inputs and targets a plan takes. */
const PLAN_DTYPES: readonly string[] = ['float32', 'float16', 'int32', 'bool'];

/** A value a request gives, for an error: `'adam'`, `42`, `{"a":1}`. */
function given(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : typeof value === 'function' ? 'a function' : (JSON.stringify(value) ?? String(value));
}

function checkInput(input: PlanInput | undefined, what: string): PlanInput {
  if (input === null || typeof input !== 'object' || !Array.isArray(input.shape) || !input.shape.every((d) => Number.isInteger(d) && d > 0)) {
    throw planError(`${what} must be { shape: [positive integers], dtype? }, got ${JSON.stringify(input)}`);
  }
  const huge = input.shape.find((d) => d > MAX_DIMENSION);
  if (huge !== undefined) throw planError(`${what} has a dimension of ${huge}; a dimension has at most ${MAX_DIMENSION} elements`);
  if (input.shape.length === 0) throw planError(`${what} needs a batch dimension (its first dimension is the micro-batch size)`);
  if (input.dtype !== undefined && !PLAN_DTYPES.includes(input.dtype)) throw planError(`${what}.dtype must be one of ${PLAN_DTYPES.join(', ')}, got ${given(input.dtype)}`);
  return input;
}

/** Refuses an optimizer that is not a name of {@link PLAN_OPTIMIZERS} (its own keys, not Object.prototype's) or a function, and a loss that is not a name or a function. */
function checkTrainingChoices(request: PlanRequest): void {
  const optimizer: unknown = request.optimizer;
  if (optimizer !== undefined && typeof optimizer !== 'function' && !(typeof optimizer === 'string' && Object.hasOwn(PLAN_OPTIMIZERS, optimizer))) {
    throw planError(`unknown optimizer ${given(optimizer)}; expected one of ${Object.keys(PLAN_OPTIMIZERS).join(', ')} or a function of the model`);
  }
  const loss: unknown = request.loss;
  if (loss !== undefined && typeof loss !== 'function' && !(typeof loss === 'string' && canonicalLossName(loss) !== undefined)) {
    throw planError(`unknown loss ${given(loss)}; expected one of ${lossNamesText()}, or a function (yTrue, yPred) => tf.Tensor`);
  }
}

/** True if `t` lives on the shape-only backend (it was made while planning). */
function madeForPlanning(t: tf.Tensor): boolean {
  return engine().state.tensorInfo.get(t.dataId)?.backend instanceof ShapeOnlyBackend;
}

/** An input of the given shape, made by the `Fill` kernel: on the shape-only backend it has no values. */
function exampleTensor(input: PlanInput): tf.Tensor {
  const dtype = input.dtype ?? 'float32';
  if (dtype === 'float16') return half(tf.fill([...input.shape], 0, 'float32'));
  return tf.fill([...input.shape], 0, dtype);
}

/** Kernels traced between two reports of a plan's progress. */
const KERNELS_PER_REPORT = 2000;

/** The RangeError of an array too large for the host that caused `error` (or is it), if one did. */
function hostArrayRangeError(error: unknown): RangeError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 8; cause = cause.cause, depth++) {
    if (cause instanceof RangeError && /typed array length|Array buffer allocation failed|Invalid array length/.test(cause.message)) return cause;
  }
  return undefined;
}

/**
 * An error of `what` (building or tracing the model) caused by an array too
 * large for the host, as an error that says what makes values on the host
 * while planning and what to use instead; other errors as they are.
 */
function hostArrayError(error: unknown, what: string): unknown {
  const rangeError = hostArrayRangeError(error);
  if (rangeError === undefined) return error;
  return planError(
    `${what} made a tensor too large for the host's memory (${rangeError.message}): while planning, random draws and layers' weights have no values, ` +
      'but tf.zeros, tf.ones, tf.tensor and tf.buffer make their values on the host; make large constant tensors with tf.fill(shape, value), which is planned without values',
  );
}

function optimizerFor(request: PlanRequest, model: WrappableModel, traced: TracedModel): Optimizer {
  const choice = request.optimizer;
  const target = isLayersModel(model) ? model : [...traced.variables.values()].filter((v) => v.trainable);
  if (choice === undefined) return defaultOptimizerBuilder(model, 'plan')(target);
  if (typeof choice === 'function') {
    const optimizer = choice(target);
    if (!(optimizer instanceof Optimizer)) throw planError('optimizer must return a poptfjs optimizer, e.g. (model) => new optim.Adam(model, { lr: 1e-3 })');
    return optimizer;
  }
  return PLAN_OPTIMIZERS[choice](target);
}

/**
 * Plans `build()`'s model on the simulated IPUs of `request.options`: builds
 * it on the shape-only backend, traces it on inputs of the given shapes,
 * and compiles it, returning the memory of each IPU, whether it fits, and
 * the timeline and throughput of one call. Nothing is computed (random
 * draws, layers' initial weights and gradients' fills have shapes and no
 * values), so the model may be larger than the host's memory; a model that
 * reads tensor values while it is built or traced gets a clear error naming
 * the kernel. Its cost follows the model's graph, not its weights, nor the
 * number of micro-batches (device iterations and gradient accumulation
 * repeat the schedule's steady state, which is simulated once).
 */
export async function plan(build: PlanBuild, request: PlanRequest): Promise<Plan> {
  if (typeof build !== 'function') throw planError('expected a function that builds the model, e.g. () => tf.sequential({...})');
  if (request === null || typeof request !== 'object' || !Array.isArray(request.inputs)) throw planError('expected { inputs: [{ shape, dtype? }], ... }');
  const inputs = request.inputs.map((input, i) => checkInput(input, `inputs[${i}]`));
  const target = request.target === undefined ? undefined : checkInput(request.target, 'target');
  checkTrainingChoices(request);
  const training = request.training ?? (request.loss !== undefined || request.optimizer !== undefined || target !== undefined);
  const options = request.options ?? new Options();
  if (!(options instanceof Options)) throw planError('options must be a poptfjs Options object');
  const settings = options.settings;
  const execution = executionSettings(settings, training);
  const microBatch = inputs[0]?.shape[0] ?? 1;
  // Built and traced with shapes only; compiled after, on the usual backend, as a real compile would be
  // (patterns that fold constants or suit the backend do the same).
  const progress = CompileProgress.over(PLAN_STEPS, request.progress, settings.showCompilationProgressBar ? progressBar(process.stderr, 'Planning', PLAN_STEPS) : undefined);
  const { traced, optimizer, name, examples, float16 } = await withShapeOnlyBackend(async () => {
    let model: WrappableModel;
    try {
      model = await build();
    } catch (error) {
      throw hostArrayError(error, 'build()');
    }
    if (!isLayersModel(model) && typeof model !== 'function') throw planError(`build() must return a tf.LayersModel or a function of tensors, got ${typeof model}`);
    progress.step();
    const tensors = [...inputs, ...(training && target ? [target] : [])].map(exampleTensor);
    let kernels = 0;
    const afterKernel = () => {
      if (++kernels % KERNELS_PER_REPORT === 0) progress.detail(`${kernels} kernels traced`);
    };
    let traced: TracedModel;
    try {
      traced = training ? traceTraining(model, request.loss, tensors, { afterKernel }) : traceInference(model, tensors, { afterKernel });
    } catch (error) {
      throw hostArrayError(error, 'the model');
    }
    progress.step();
    const optimizer = training ? optimizerFor(request, model, traced) : undefined;
    const float16 = float16Declarations(traced, tensors, settings.precision.runningStatisticsAlwaysFloat);
    const examples = tensors.map((x) => ({ shape: [...x.shape], dtype: x.dtype }));
    tf.dispose(tensors);
    // What build() made for planning goes, so another plan can build the model again; a model made before is left alone.
    const variables = [...traced.variables.values()];
    if (variables.every(madeForPlanning)) {
      if (isLayersModel(model)) model.dispose();
      else tf.dispose(variables);
    }
    return { traced, optimizer, name: modelName(model), examples, float16 };
  });
  const executable = compileGraph(
    {
      kind: training ? 'training' : 'inference',
      modelName: name,
      graph: traced.graph,
      inputSignature: examples,
      microBatchSize: microBatch,
      execution,
      settings: { ...settings, allowOutOfMemory: true },
      optimizer,
      replicaGroupings: {},
      float16,
      weightNames: traced.weightNames,
      simulatedOnly: true,
    },
    undefined,
    {},
    progress,
  );
  const { memory, timeline } = executable.hardware;
  return {
    fits: memory.fits,
    memory,
    timeline,
    throughput: timeline.throughput,
    samplesPerCall: hostBatchSize(execution.factors, microBatch),
    parameters: [...traced.variables.values()].reduce((n, v) => n + v.size, 0),
    executable,
    summary: () => summaryReport(executable, false),
  };
}
