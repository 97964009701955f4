/**
 * How an executor traces its model: on the newest host weights, with each
 * weight split across replica groups traced as one replica's slice; and how
 * many of the traced inputs the model itself takes.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import type { ReplicaGrouping } from '../executable/replica_grouping.js';
import type { LossSpec } from '../trace/loss_function.js';
import { isLayersModel, modelInputCount, type WrappableModel } from '../trace/model_function.js';
import type { TracedModel } from '../trace/trace_model.js';
import { hostVariable } from './host_variable.js';
import { traceWrappedModel } from './model_trace.js';
import { wrappedModelState } from './model_registry.js';

/** What an executor traces. */
export interface ExecutorTraceRequest {
  /** The wrapped model, whose host weights are read. */
  readonly wrapped: WrappableModel;
  /** The model to trace: the wrapped model, or a function model taking flat tensors. */
  readonly model: WrappableModel;
  readonly training: boolean;
  readonly loss: LossSpec | undefined;
  /** One micro-batch of each input. */
  readonly examples: readonly tf.Tensor[];
  /** The replica groupings set per weight, by weight name. */
  readonly replicaGroupings: Readonly<Record<string, ReplicaGrouping>>;
  /** Checks the host's memory after each kernel. */
  readonly afterKernel: () => void;
}

/** One replica's slice of each weight split across replica groups, to trace with. */
function groupedSlices(model: WrappableModel, replicaGroupings: Readonly<Record<string, ReplicaGrouping>>): Map<tf.Variable, tf.Tensor> {
  const slices = new Map<tf.Variable, tf.Tensor>();
  for (const name of Object.keys(replicaGroupings)) {
    const variable = hostVariable(model, name);
    if (variable.rank === 0) throw new PoptfjsError(`parameter '${name}' is a scalar and cannot be split across replica groups`, { type: 'replication' });
    slices.set(
      variable,
      tf.tidy(() => tf.squeeze(tf.slice(variable, [0], [1]), [0])),
    );
  }
  return slices;
}

/**
 * Traces `model` (the wrapped model, or a function model taking flat
 * tensors) on `examples` (one micro-batch), weights split across replica
 * groups traced with one replica's slice; `afterKernel` checks the host's
 * memory after each kernel.
 */
export async function traceExecutorModel(request: ExecutorTraceRequest): Promise<TracedModel> {
  // The trace reads the host weights: they must not be copied from a device while it records.
  wrappedModelState(request.wrapped).newestOnDevice?.copyWeightsToHostIfNeeded();
  const replacements = groupedSlices(request.wrapped, request.replicaGroupings);
  try {
    const { model, training, loss, examples, afterKernel } = request;
    return await traceWrappedModel({ model, training, loss, examples, replacements, afterKernel });
  } finally {
    tf.dispose([...replacements.values()]);
  }
}

/** How many of `signatureLength` inputs the traced `model` itself takes (the rest are a training model's targets). */
export function tracedInputCount(model: WrappableModel, training: boolean, loss: LossSpec | undefined, signatureLength: number): number {
  if (!training || isLayersModel(model)) return isLayersModel(model) ? model.inputs.length : signatureLength;
  return loss === undefined ? signatureLength : (modelInputCount(model) ?? signatureLength - 1);
}
