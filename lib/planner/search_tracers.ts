/**
 * What a search traces at each micro-batch size: a tfjs model that a
 * function builds (traced with shapes only, as `plan()` traces it), or an
 * ONNX model, read once and imported at each size without its weights.
 */
import { tracePlan, type PlanBuild, type PlanInput } from '../executor/model_plan.js';
import type { Options } from '../options/options.js';
import type { AutoPlanRequest, OnnxAutoPlanRequest } from './auto_plan_request.js';
import { onnxFixedBatch, onnxGraphInputs, onnxSampleShapes, onnxTrace, readOnnxModel } from './onnx_plan.js';
import { searchError, type SearchTracer } from './search_graphs.js';

/** `input` (the shape of one sample) with a micro-batch of `m` in front. */
function batched(input: PlanInput, m: number, what: string): PlanInput {
  if (input === null || typeof input !== 'object' || !Array.isArray(input.shape)) throw searchError(`${what} must be { shape: [...], dtype? }, got ${JSON.stringify(input)}`);
  return { ...input, shape: [m, ...input.shape] };
}

/** The tfjs model `build()` builds, traced with the request's inputs, target, loss and optimizer. */
export function tfjsTracer(build: PlanBuild, request: AutoPlanRequest, base: Options, training: boolean): SearchTracer {
  return (m) =>
    tracePlan(build, {
      ...(request.optimizer !== undefined ? { optimizer: request.optimizer } : {}),
      ...(request.loss !== undefined ? { loss: request.loss } : {}),
      training,
      options: base,
      inputs: request.inputs.map((input, i) => batched(input, m, `inputs[${i}]`)),
      ...(request.target !== undefined ? { target: batched(request.target, m, 'target') } : {}),
    });
}

/** An ONNX model's tracer, and the micro-batch it fixes (exported without a dynamic batch axis), if it does. */
export interface OnnxSearchTracer {
  readonly tracer: SearchTracer;
  readonly fixedBatch: number | undefined;
}

/**
 * The ONNX model at `source` (a path, or its bytes), read once without its
 * external data and imported at each size with the request's sample shapes
 * (default: as it declares them), loss tensor and optimizer.
 */
export function onnxTracer(source: string | Uint8Array, request: OnnxAutoPlanRequest): OnnxSearchTracer {
  const model = readOnnxModel(source);
  const names = onnxGraphInputs(model);
  if (request.inputs !== undefined && (!Array.isArray(request.inputs) || request.inputs.length !== names.length))
    throw searchError(`the model has ${names.length} graph input(s) (${names.join(', ')}); inputs must give one sample's shape of each`);
  const samples = request.inputs?.map((input, i) => batched(input, 1, `inputs[${i}]`).shape.slice(1)) ?? onnxSampleShapes(model);
  const tracer: SearchTracer = (m) =>
    onnxTrace(model, {
      shapes: samples.map((shape) => [m, ...shape]),
      ...(request.loss !== undefined ? { loss: request.loss } : {}),
      ...(request.optimizer !== undefined ? { optimizer: request.optimizer } : {}),
      ...(request.float16 ? { float16: true } : {}),
    });
  return { tracer, fixedBatch: request.inputs === undefined ? onnxFixedBatch(model) : undefined };
}
