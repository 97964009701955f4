/**
 * How a wrapped model is traced: a built layers model with shapes only, on
 * the shape-only backend (nothing is computed, so the trace takes no host
 * memory for activations and no time for arithmetic), falling back to a real
 * trace on the backend when that cannot give a graph that runs (a constant
 * the model makes while it runs whose values the shape-only backend does not
 * keep, a kernel without a shape rule, a value read inside the model); a
 * function model, which may make its weights while it first runs, for real.
 */
import type * as tf from '@tensorflow/tfjs';
import { withShapeOnlyBackend } from '../backend/shape_only/shape_only_mode.js';
import { getLogger } from '../common/log.js';
import type { LossSpec } from '../trace/loss_function.js';
import { lacksDistribution } from '../trace/random_distribution.js';
import { allLayers, isLayersModel, modelName, type WrappableModel } from '../trace/model_function.js';
import { traceInference, traceTraining, type TraceOptions, type TracedModel } from '../trace/trace_model.js';

const log = getLogger('compile');

/** What to trace. */
export interface ModelTraceRequest {
  readonly model: WrappableModel;
  readonly training: boolean;
  readonly loss: LossSpec | undefined;
  /** One micro-batch of each input. */
  readonly examples: readonly tf.Tensor[];
  /** Variables to trace with another value (weights split across replica groups). */
  readonly replacements: ReadonlyMap<tf.Variable, tf.Tensor>;
  /** Checks the host's memory after each kernel of a real trace. */
  readonly afterKernel: () => void;
}

function traceOnce(request: ModelTraceRequest, options: TraceOptions): TracedModel {
  return request.training ? traceTraining(request.model, request.loss, request.examples, options) : traceInference(request.model, request.examples, options);
}

/** True if every constant of the graph has its values and every random draw its distribution (a graph that can run). */
function runnable(traced: TracedModel): boolean {
  const { values, nodes } = traced.graph;
  return values.every((v) => v.source.kind !== 'constant' || v.source.data !== null) && !nodes.some(lacksDistribution);
}

/** Traces the model: with shapes only when it can, else for real. */
export async function traceWrappedModel(request: ModelTraceRequest): Promise<TracedModel> {
  // Every layer built: the weights exist (a Sequential model is never `built` itself until it is compiled or fit).
  if (isLayersModel(request.model) && allLayers(request.model).every((layer) => layer.built)) {
    try {
      const traced = await withShapeOnlyBackend(() => traceOnce(request, { replacements: request.replacements }));
      if (runnable(traced)) return traced;
      log.debug(() => `model '${modelName(request.model)}' makes constants or random draws the shape-only backend keeps no values of; tracing it for real`);
    } catch (error) {
      log.debug(() => `model '${modelName(request.model)}' cannot be traced with shapes only (${(error as Error).message}); tracing it for real`);
    }
  }
  return traceOnce(request, { replacements: request.replacements, afterKernel: request.afterKernel });
}
