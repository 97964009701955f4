/**
 * Tracing a model into the IR: once for inference (the forward pass), or once
 * for a training step (forward pass, loss and the backward pass to every
 * trainable weight, with the loss scale as a graph input).
 *
 * While tracing, every layer's `call` is wrapped so nodes are annotated with
 * the layer's name and `BeginBlock` annotations take effect, and the block
 * rules are checked: when `Block`s are used, every op of the model must be in
 * one, and every layer annotated with `BeginBlock` must run.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { engine } from '../backend/tfjs_internals.js';
import { eliminateDeadCode } from '../ir/dead_code.js';
import type { Graph, GraphOutputs, ValueId } from '../ir/graph.js';
import { layerAnnotation, withBlockTrace, type BlockTrace } from './block_scope.js';
import { KernelRecorder, TraceError } from './kernel_recorder.js';
import { forwardWithLoss, type LossSpec } from './loss_function.js';
import { allLayers, callModel, flattenOutputs, modelName, trainableVariables, type WrappableModel } from './model_function.js';
import { runningOnIpu } from './running_on_ipu.js';
import { withVariablesReplaced } from './variable_replacement.js';
import { reportedWeightNames } from './weight_names.js';
import { withHostOverlap } from './host_overlap_roles.js';
import { nameRecord } from '../common/name_record.js';
import { withBatchedGatherGradient } from './batched_gather_gradient.js';

/** A traced model: its graph and the tf.Variables behind the graph's parameters. */
export interface TracedModel {
  readonly graph: Graph;
  /** The model's variables, by parameter name. */
  readonly variables: ReadonlyMap<string, tf.Variable>;
  /** The name reports give each parameter (its name in the model, see `weight_names.ts`), by parameter name. */
  readonly weightNames: ReadonlyMap<string, string>;
}

/** Options of a trace. */
export interface TraceOptions {
  /**
   * Variables to trace with another value (of another shape): a weight
   * split across replica groups is traced with one replica's slice.
   */
  readonly replacements?: ReadonlyMap<tf.Variable, tf.Tensor>;
  /** Called after each kernel the model calls (a check of the memory its tensors take). */
  readonly afterKernel?: () => void;
}

/**
 * Runs `fn` with layers hooked so nodes name the layer and run in its block:
 * every layer's `apply` (layers used directly by a function model, added to
 * `applied`), and the `call` of each layer of a layers model (which nested
 * models call without `apply`).
 */
function withLayerHooks<T>(model: WrappableModel, recorder: KernelRecorder, blocks: BlockTrace, applied: Set<tf.layers.Layer>, fn: () => T): T {
  const restore: Array<() => void> = [];
  const layerPrototype = tf.layers.Layer.prototype as unknown as { apply: (...args: unknown[]) => unknown };
  const originalApply = layerPrototype.apply;
  layerPrototype.apply = function (this: tf.layers.Layer, ...args: unknown[]) {
    applied.add(this);
    return blocks.inLayer(this, () => recorder.inLayer(this.name, () => originalApply.apply(this, args)));
  };
  restore.push(() => (layerPrototype.apply = originalApply));
  for (const layer of allLayers(model)) {
    const target = layer as unknown as { call: (...args: unknown[]) => unknown };
    const original = target.call;
    const own = Object.hasOwn(target, 'call');
    target.call = function (this: unknown, ...args: unknown[]) {
      return blocks.inLayer(layer, () => recorder.inLayer(layer.name, () => original.apply(this, args)));
    };
    restore.push(() => {
      if (own) target.call = original;
      else delete (target as Partial<typeof target>).call;
    });
  }
  try {
    return fn();
  } finally {
    restore.forEach((r) => r());
  }
}

/** Checks PopTorch's block rules on the traced graph. */
function checkBlockRules(model: WrappableModel, graph: Graph, blocks: BlockTrace): void {
  const unused = allLayers(model).filter((layer) => layerAnnotation(layer) && !blocks.begunLayers.has(layer));
  if (unused.length > 0) {
    throw new PoptfjsError(`layer '${unused[0]!.name}' is annotated with BeginBlock but the model never runs it; annotate only layers the model uses (or removeBlocks)`, {
      type: 'annotation',
      location: unused[0]!.name,
    });
  }
  if (!blocks.usedScopedBlocks) return;
  const outside = graph.nodes.find((n) => n.annotations.pass === 'forward' && !n.annotations.loss && n.annotations.block === undefined);
  if (outside) {
    throw new PoptfjsError(
      `kernel ${outside.kernel}${outside.annotations.layer ? ` in layer '${outside.annotations.layer}'` : ''} runs outside any Block, ` +
        'but the model uses Blocks: every layer must be inside a Block (or BlockFunction) scope',
      { type: 'annotation', location: outside.annotations.layer ?? outside.kernel },
    );
  }
}

function wrapTraceFailure(model: WrappableModel, error: unknown): never {
  if (error instanceof PoptfjsError) throw error;
  const message = error instanceof Error ? error.message : String(error);
  throw new TraceError(`tracing model '${modelName(model)}' failed: ${message}`, modelName(model), error);
}

/** Records `body` (which runs the model, for a training step when `training`) into a graph, with block and layer hooks, and checks the block rules. */
function trace(
  model: WrappableModel,
  inputs: readonly tf.Tensor[],
  options: TraceOptions,
  training: boolean,
  body: (recorder: KernelRecorder, blocks: BlockTrace) => GraphOutputs,
): TracedModel {
  try {
    const layers = allLayers(model);
    const applied = new Set<tf.layers.Layer>();
    return withBlockTrace(layers, (blocks) =>
      withVariablesReplaced(options.replacements ?? new Map(), () => {
        const { recorder, result } = KernelRecorder.record(
          (recorder) => {
            inputs.forEach((t, i) => recorder.bindInput(t, `input${i}`));
            return runningOnIpu(() => withLayerHooks(model, recorder, blocks, applied, () => body(recorder, blocks)));
          },
          { training, ...(options.afterKernel ? { afterKernel: options.afterKernel } : {}) },
        );
        const graph = eliminateDeadCode(recorder.builder.build(withHostOverlap(recorder, result)));
        checkBlockRules(model, graph, blocks);
        return { graph, variables: recorder.variables, weightNames: reportedWeightNames([...layers, ...applied], recorder.variables.values()) };
      }),
    );
  } catch (error) {
    wrapTraceFailure(model, error);
  }
}

/** Traces the forward pass of `model` on `inputs` (one micro-batch), with `training` false. */
export function traceInference(model: WrappableModel, inputs: readonly tf.Tensor[], options: TraceOptions = {}): TracedModel {
  return trace(model, inputs, options, false, (recorder) =>
    tf.tidy(() => {
      const outputs = flattenOutputs(callModel(model, [...inputs], false), `model '${modelName(model)}'`);
      return { outputs: outputs.map((t) => recorder.valueFor(t)) };
    }),
  );
}

/**
 * The trainable variables a function model reads, found by tracing its
 * forward pass once (a function may create its layers' variables on first
 * use, so they cannot be listed before it runs).
 */
function discoverTrainableVariables(model: WrappableModel, loss: LossSpec | undefined, inputs: readonly tf.Tensor[], options: TraceOptions): tf.Variable[] {
  const { variables } = trace(model, inputs, options, true, (recorder) =>
    tf.tidy(() => {
      const step = forwardWithLoss(model, loss, [...inputs], (fn) => recorder.inLoss(fn));
      return { outputs: [...step.outputs, step.loss].map((t) => recorder.valueFor(t)) };
    }),
  );
  return [...variables.values()].filter((v) => v.trainable);
}

/**
 * Traces one training step of `model` on `inputs` (model inputs then
 * targets, one micro-batch): outputs, loss, and gradients of
 * `sum(loss) * lossScale` with respect to every trainable weight.
 */
export function traceTraining(model: WrappableModel, loss: LossSpec | undefined, inputs: readonly tf.Tensor[], options: TraceOptions = {}): TracedModel {
  const eng = engine();
  const variables = trainableVariables(model) ?? discoverTrainableVariables(model, loss, inputs, options);
  return trace(model, inputs, options, true, (recorder) => {
    const lossScale = tf.scalar(1);
    const lossScaleId = recorder.bindInput(lossScale, 'lossScale');
    let outputIds: ValueId[] = [];
    let lossId: ValueId | undefined;
    const forward = () => {
      const step = forwardWithLoss(model, loss, [...inputs], (fn) => recorder.inLoss(fn));
      outputIds = step.outputs.map((t) => recorder.valueFor(t));
      lossId = recorder.valueFor(step.loss);
      const scaled = recorder.inLoss(() => tf.sum(tf.mul(step.loss, lossScale)));
      recorder.beginBackward();
      return scaled;
    };
    const gradients = nameRecord<ValueId>();
    if (variables.length === 0) {
      tf.tidy(forward);
    } else {
      const { value, grads } = withBatchedGatherGradient(() => eng.gradients(forward, variables, undefined, true));
      grads.forEach((g, i) => {
        if (g) gradients[variables[i]!.name] = recorder.valueFor(g);
      });
      tf.dispose([value, ...grads.filter((g): g is tf.Tensor => g !== undefined)]);
    }
    lossScale.dispose();
    return { outputs: outputIds, loss: lossId!, gradients, lossScale: lossScaleId };
  });
}
