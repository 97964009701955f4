/**
 * `forLoop`: PopTorch's `for_loop`, a loop that runs on the device.
 */
import * as tf from '@tensorflow/tfjs';
import { POPTFJS_KERNELS } from '../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { currentRecorder } from '../lib/trace/kernel_recorder.js';
import { bodyOutputs, checkedBody, checkedTensorList, controlFlowError, tensorTypeText, type ControlFlowBody } from './arguments/control_flow_arguments.js';

const OP = 'ops.forLoop';
const BODY = 'the body of ops.forLoop';

/**
 * The most iterations of its loops a model runs each time (loops nested in a
 * body multiply): the simulated IPU computes every iteration on the host, a
 * few to hundreds of microseconds each, so more would not end in hours.
 * (Poplar's `Repeat` counts with 32 bits: 2^32 - 1 at most.)
 */
export const MAX_LOOP_ITERATIONS = 2 ** 24;

/** The iterations of the loops whose bodies are being traced (1 outside any). */
let enclosingIterations = 1;

/** Checks that one iteration's outputs can be the next one's inputs. */
function checkCarried(inputs: readonly tf.Tensor[], outputs: readonly tf.Tensor[]): void {
  if (outputs.length !== inputs.length) {
    throw controlFlowError(
      OP,
      `${OP}: the body returns ${outputs.length} tensor(s) for ${inputs.length} input(s); it must return one tensor per input, as each iteration's outputs are the next one's inputs`,
    );
  }
  outputs.forEach((out, i) => {
    const input = inputs[i]!;
    if (out.dtype !== input.dtype || !tf.util.arraysEqual(out.shape, input.shape)) {
      throw controlFlowError(
        OP,
        `${OP}: the body's output ${i} is ${tensorTypeText(out)} but its input ${i} is ${tensorTypeText(input)}; each iteration's outputs are the next one's inputs, so they must have the same shapes and dtypes`,
      );
    }
  });
}

/** Runs the loop with tfjs, outside a trace: `count` calls of `body`, each on the previous one's outputs. */
function runEagerly(count: number, body: ControlFlowBody, inputs: readonly tf.Tensor[]): tf.Tensor[] {
  let carried: tf.Tensor[] = [...inputs];
  for (let i = 0; i < count; i++) {
    const previous = carried;
    carried = tf.tidy(() => bodyOutputs(OP, BODY, body(...previous)));
    checkCarried(inputs, carried);
    for (const t of previous) if (!inputs.includes(t) && !carried.includes(t)) t.dispose();
  }
  return carried.map((t) => (inputs.includes(t) ? t.clone() : t));
}

/**
 * An on-device for loop: runs `body` `count` times, each time on the
 * previous run's outputs, starting from `inputs`, and returns the last
 * outputs. The body takes as many tensors as it returns, each output of the
 * shape and dtype of the input it replaces; it may also read any tensor of
 * the model (weights, inputs, values computed before the loop).
 *
 * Inside a model that poptfjs compiles, the body is traced once into a
 * subgraph of a `poptfjs.ForLoop` node that the device runs `count` times
 * (the graph does not grow with `count`), up to {@link MAX_LOOP_ITERATIONS}
 * iterations in all (loops in a body multiply). The body gets copies of its inputs
 * (updating them does not change the tensors passed in), cannot read values
 * (`dataSync`), write weights, or hand out tensors other than by returning
 * them. As in PopTorch, the loop is for inference only: a training model
 * using it is refused. Outside a compiled model, the loop runs with tfjs.
 *
 * On the simulated IPU the loop costs its body's kernels `count` times, plus
 * a copy of the carried values into the next iteration's inputs each time
 * (as PopART's `LoopOp` copies them); its memory is its body's, once.
 */
export function forLoop(count: number, body: (...inputs: tf.Tensor[]) => tf.Tensor | readonly tf.Tensor[], inputs: readonly tf.Tensor[]): tf.Tensor[] {
  const tensors = checkedTensorList(OP, `${OP} expects input tensors (inputs)`, inputs);
  const run = checkedBody(OP, 'body', body);
  if (!Number.isInteger(count) || count < 0) throw controlFlowError(OP, `${OP}: count must be a non-negative integer, got ${String(count)}`);
  const recorder = currentRecorder();
  if (!recorder) return runEagerly(count, run, tensors);
  if (recorder.training) throw controlFlowError(OP, 'ops.forLoop() is only supported in inference.');
  const outer = enclosingIterations;
  const iterations = outer * count;
  if (iterations > MAX_LOOP_ITERATIONS) {
    const nested = outer > 1 ? ` (${count} in each of the ${outer} iterations of the loops around it)` : '';
    throw controlFlowError(
      OP,
      `${OP}: a loop of ${iterations} iterations${nested} is more than the ${MAX_LOOP_ITERATIONS} iterations a model may run: ` +
        'the simulated IPU computes every iteration on the host, which would take hours; loop fewer times, or do the work of several iterations in one',
    );
  }
  enclosingIterations = iterations;
  let traced: ReturnType<typeof recorder.traceBody>;
  try {
    traced = recorder.traceBody(BODY, `${count} times`, tensors, (bodyInputs) => bodyOutputs(OP, BODY, run(...bodyInputs)));
  } finally {
    enclosingIterations = outer;
  }
  checkCarried(tensors, traced.outputs);
  return recorder.addControlFlowNode(POPTFJS_KERNELS.forLoop, traced.inputs, { count }, [traced.graph], traced.outputs);
}
