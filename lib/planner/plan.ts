/**
 * `plan()`: whether a model fits its IPUs and how fast it runs, without
 * computing it — a tfjs model built by a function (planned with shapes only,
 * see lib/executor/model_plan.ts), or an ONNX model, by path or bytes
 * (planned without reading its weights, see `onnx_plan.ts`).
 */
import { plan as planModel, type Plan, type PlanBuild, type PlanRequest } from '../executor/model_plan.js';
import { PoptfjsError } from '../common/errors.js';
import { planOnnx, type OnnxPlanRequest } from './onnx_plan.js';

/** Plans the tfjs model `build()` builds: see `PlanRequest`. */
export function plan(build: PlanBuild, request: PlanRequest): Promise<Plan>;
/** Plans the ONNX model at `model` (a path, or the model's bytes) without reading its weights: see `OnnxPlanRequest`. */
export function plan(model: string | Uint8Array, request?: OnnxPlanRequest): Promise<Plan>;
export function plan(source: PlanBuild | string | Uint8Array, request?: PlanRequest | OnnxPlanRequest): Promise<Plan> {
  if (typeof source === 'string' || source instanceof Uint8Array) return planOnnx(source, request as OnnxPlanRequest | undefined);
  if (typeof source === 'function') return planModel(source, request as PlanRequest);
  return Promise.reject(
    new PoptfjsError('plan: expected a function that builds a tfjs model, e.g. () => tf.sequential({...}), or an ONNX model (a path or its bytes)', { type: 'executor' }),
  );
}
