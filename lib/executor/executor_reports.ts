/**
 * What an executor reports about its compiled model: the plan, the IR, its
 * tensor names and the patterns that fired, output dtypes, simulated cycles and latency, the
 * compilation time, the summary report and the worker IPUs' measured overlap.
 */
import { PoptfjsError } from '../common/errors.js';
import { irText } from '../ir/ir_text.js';
import { withEngineOptions } from '../options/engine_options.js';
import { summaryReport } from '../report/summary_report.js';
import { planText } from '../report/plan_text.js';
import type { PoptfjsDataType } from '../precision/half.js';
import type { Engine } from '../engine/engine.js';
import { tensorNames } from '../compile/anchored_tensors.js';
import type { ExecutorState } from './executor_state.js';

/** The execution plan as text: stages, IPUs and the schedule table. */
export function executorPlanText(state: ExecutorState): string {
  const { placement, schedule, streamingTransfers: transfers } = state.requireCompiled('planText').executable;
  return planText(placement, schedule, transfers);
}

/** The compiled graph as text. */
export function executorIrText(state: ExecutorState): string {
  return irText(state.requireCompiled('irText').executable.graph);
}

/** The names of the tensors of the compiled graph that `Options.anchorTensor` takes, as PopTorch's `getTensorNames()`. */
export function compiledTensorNames(state: ExecutorState): string[] {
  return tensorNames(state.requireCompiled('getTensorNames').executable.graph);
}

/** How often each IR pattern fired when the model was compiled, by pattern name. */
export function firedPatterns(state: ExecutorState): Readonly<Record<string, number>> {
  return state.requireCompiled('patterns').executable.firedPatterns;
}

/** The dtype of each model output (`'float16'` for outputs computed in float16). */
export function outputDtypes(state: ExecutorState): PoptfjsDataType[] {
  const { graph, outputCount } = state.requireCompiled('outputDtypes').executable;
  return graph.roles.outputs.slice(0, outputCount).map((id) => {
    const v = graph.values[id]!;
    return v.precision === 'float16' ? 'float16' : v.dtype;
  });
}

/** Simulated cycles of one call on the target IPUs (a call must have run). */
export function cycleCount(state: ExecutorState): number {
  const { executable } = state.requireCompiled('cycleCount');
  if (state.calls === 0) throw new PoptfjsError('cycleCount: the model has not run yet', { type: 'executor' });
  return executable.hardware.timeline.cycles;
}

/** Simulated latency of a call in seconds: `{ min, max, mean }` over the calls so far. */
export function computeLatency(state: ExecutorState): { min: number; max: number; mean: number } {
  const { executable } = state.requireCompiled('getComputeLatency');
  if (state.calls === 0) throw new PoptfjsError('getComputeLatency: the model has not run yet', { type: 'executor' });
  const seconds = executable.hardware.timeline.duration;
  return { min: seconds, max: seconds, mean: seconds };
}

/** Seconds the compilation took (wall clock). */
export function compilationTime(state: ExecutorState): number {
  state.requireCompiled('compilationTime');
  return state.compileSeconds;
}

/** The summary report: memory per IPU, placement and schedule, and the simulated execution when profiling is enabled. */
export function executorSummaryReport(state: ExecutorState): string {
  const { executable, engine } = state.requireCompiled('getSummaryReport');
  const allReduce = state.instances.gradientAllReduce(executable, state.training);
  return summaryReport(executable, withEngineOptions(state.options.settings).profileDir !== undefined, engine.measuredOverlap(), allReduce);
}

/** What the worker IPUs measured over the last call (undefined before a call, or when the IPUs run in-process). */
export function measuredOverlap(state: ExecutorState): ReturnType<Engine['measuredOverlap']> {
  return state.requireCompiled('measuredOverlap').engine.measuredOverlap();
}
