/**
 * The host overlap marks of a trace (`ops.setOverlapForInput` /
 * `setOverlapForOutput`) resolved to the model inputs and outputs they are
 * on, with PopTorch's errors for an output mark on a value the model does not
 * return, or returns twice (poptorch/source/OverlappedIO.cpp).
 */
import type { GraphOutputs, ValueId } from '../ir/graph.js';
import type { HostOverlapMark } from '../ir/host_overlap.js';
import { TraceError, type KernelRecorder } from './kernel_recorder.js';

/** The mark of an output value: on its one place among the outputs, or on the loss. */
function outputMark(roles: GraphOutputs, value: ValueId): Pick<HostOverlapMark, 'of' | 'index'> {
  const places = roles.outputs.flatMap((id, index) => (id === value ? [index] : []));
  if (places.length > 1) {
    throw new TraceError(
      'poptorch.set_overlap_for_output cannot be used with a tensor that is returned twice. Please check all returned tensors including those nested in tuples/lists. ' +
        `(ops.setOverlapForOutput: the marked tensor is the model's outputs ${places.join(' and ')}; return it once)`,
    );
  }
  if (places.length === 1) return { of: 'output', index: places[0]! };
  if (value === roles.loss) return { of: 'loss', index: 0 };
  throw new TraceError(
    'poptorch.set_overlap_for_output applied on a node which is not a tensor output to the model. ' +
      '(ops.setOverlapForOutput marks a tensor the model returns, just before it returns it; the marked tensor is used by the model but not returned)',
  );
}

/** `roles` with the recorder's host overlap marks placed on the model's inputs and outputs (unchanged when there are none). */
export function withHostOverlap(recorder: KernelRecorder, roles: GraphOutputs): GraphOutputs {
  if (recorder.hostOverlapMarks.length === 0) return roles;
  const marks = new Map<string, HostOverlapMark>();
  for (const { of, value, mode } of recorder.hostOverlapMarks) {
    const source = recorder.builder.value(value).source;
    const place = of === 'input' && source.kind === 'input' ? { of, index: source.index } : outputMark(roles, value);
    marks.set(`${place.of}${place.index}`, { ...place, mode });
  }
  return { ...roles, hostOverlap: [...marks.values()] };
}
