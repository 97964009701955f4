/**
 * Tracing a model into the IR: once for inference (the forward pass), or once
 * for a training step (forward pass, loss and the backward pass to every
 * trainable weight, with the loss scale as a graph input).
 */
import * as tf from '@tensorflow/tfjs';
import { engine } from '../backend/tfjs_internals.js';
import { eliminateDeadCode } from '../ir/dead_code.js';
import type { Graph, ValueId } from '../ir/graph.js';
import { KernelRecorder, TraceError } from './kernel_recorder.js';
import { forwardWithLoss, type LossSpec } from './loss_function.js';
import { allLayers, callModel, flattenOutputs, modelName, trainableVariables, type WrappableModel } from './model_function.js';
import { runningOnIpu } from './running_on_ipu.js';

/** A traced model: its graph and the tf.Variables behind the graph's parameters. */
export interface TracedModel {
  readonly graph: Graph;
  /** The model's variables, by parameter name. */
  readonly variables: ReadonlyMap<string, tf.Variable>;
}

/** Runs `fn` with every layer's `call` wrapped so nodes are annotated with the layer's name. */
function withLayerAnnotations<T>(model: WrappableModel, recorder: KernelRecorder, fn: () => T): T {
  const layers = allLayers(model);
  const restore: Array<() => void> = [];
  for (const layer of layers) {
    const target = layer as unknown as { call: (...args: unknown[]) => unknown };
    const original = target.call;
    const own = Object.prototype.hasOwnProperty.call(target, 'call');
    target.call = function (this: unknown, ...args: unknown[]) {
      return recorder.inLayer(layer.name, () => original.apply(this, args));
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

function wrapTraceFailure(model: WrappableModel, error: unknown): never {
  if (error instanceof TraceError) throw error;
  const message = error instanceof Error ? error.message : String(error);
  throw new TraceError(`tracing model '${modelName(model)}' failed: ${message}`, modelName(model), error);
}

function bindInputs(recorder: KernelRecorder, inputs: readonly tf.Tensor[]): void {
  inputs.forEach((t, i) => recorder.bindInput(t, `input${i}`));
}

/** Traces the forward pass of `model` on `inputs` (one micro-batch), with `training` false. */
export function traceInference(model: WrappableModel, inputs: readonly tf.Tensor[]): TracedModel {
  try {
    const { recorder, result } = KernelRecorder.record((recorder) => {
      bindInputs(recorder, inputs);
      return tf.tidy(() =>
        runningOnIpu(() =>
          withLayerAnnotations(model, recorder, () => {
            const outputs = flattenOutputs(callModel(model, [...inputs], false), `model '${modelName(model)}'`);
            return outputs.map((t) => recorder.valueFor(t));
          }),
        ),
      );
    });
    const graph = eliminateDeadCode(recorder.builder.build({ outputs: result }));
    return { graph, variables: recorder.variables };
  } catch (error) {
    wrapTraceFailure(model, error);
  }
}

/**
 * Traces one training step of `model` on `inputs` (model inputs then
 * targets, one micro-batch): outputs, loss, and gradients of
 * `sum(loss) * lossScale` with respect to every trainable weight.
 */
export function traceTraining(model: WrappableModel, loss: LossSpec | undefined, inputs: readonly tf.Tensor[]): TracedModel {
  const eng = engine();
  const variables =
    trainableVariables(model) ?? Object.values(eng.state.registeredVariables).filter((v) => v.trainable);
  try {
    const { recorder, result } = KernelRecorder.record((recorder) => {
      bindInputs(recorder, inputs);
      const lossScale = tf.scalar(1);
      const lossScaleId = recorder.bindInput(lossScale, 'lossScale');
      let outputIds: ValueId[] = [];
      let lossId: ValueId | undefined;
      const forward = () =>
        runningOnIpu(() =>
          withLayerAnnotations(model, recorder, () => {
            const step = forwardWithLoss(model, loss, [...inputs]);
            outputIds = step.outputs.map((t) => recorder.valueFor(t));
            lossId = recorder.valueFor(step.loss);
            const scaled = tf.sum(tf.mul(step.loss, lossScale));
            recorder.beginBackward();
            return scaled;
          }),
        );
      const gradients: Record<string, ValueId> = {};
      if (variables.length === 0) {
        tf.tidy(forward);
      } else {
        const { value, grads } = eng.gradients(forward, variables, undefined, true);
        grads.forEach((g, i) => {
          if (g) gradients[variables[i]!.name] = recorder.valueFor(g);
        });
        tf.dispose([value, ...grads.filter((g): g is tf.Tensor => g !== undefined)]);
      }
      lossScale.dispose();
      return { outputs: outputIds, loss: lossId!, gradients, lossScale: lossScaleId };
    });
    const graph = eliminateDeadCode(recorder.builder.build(result));
    return { graph, variables: recorder.variables };
  } catch (error) {
    wrapTraceFailure(model, error);
  }
}
