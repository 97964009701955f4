/**
 * `cond`: PopTorch's `cond`, an if/else that the device decides.
 */
import * as tf from '@tensorflow/tfjs';
import { POPTFJS_KERNELS } from '../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { currentRecorder } from '../lib/trace/kernel_recorder.js';
import { bodyOutputs, checkedBody, checkedTensorList, controlFlowError, tensorTypeText } from './arguments/control_flow_arguments.js';

const OP = 'ops.cond';
const THEN = 'the then body of ops.cond';
const ELSE = 'the else body of ops.cond';

function checkCondition(condition: unknown): tf.Tensor {
  const ok = condition instanceof tf.Tensor && condition.dtype === 'bool' && condition.size === 1;
  if (!ok) {
    const got = condition instanceof tf.Tensor ? tensorTypeText(condition) : condition === null ? 'null' : typeof condition;
    throw controlFlowError(OP, `${OP}: the condition must be a scalar boolean tensor (one element, of shape [] or [1]), got ${got}`);
  }
  return condition;
}

/** Checks that both branches return tensors of the same shapes and dtypes. */
function checkBranches(thenOutputs: readonly tf.Tensor[], elseOutputs: readonly tf.Tensor[]): void {
  if (thenOutputs.length !== elseOutputs.length) {
    throw controlFlowError(
      OP,
      `${OP}: the then body returns ${thenOutputs.length} tensor(s) and the else body ${elseOutputs.length}; both must return the same number of tensors`,
    );
  }
  thenOutputs.forEach((a, i) => {
    const b = elseOutputs[i]!;
    if (a.dtype !== b.dtype || !tf.util.arraysEqual(a.shape, b.shape)) {
      throw controlFlowError(
        OP,
        `${OP}: output ${i} is ${tensorTypeText(a)} in the then body but ${tensorTypeText(b)} in the else body; both branches must return tensors of the same shapes and dtypes`,
      );
    }
  });
}

/**
 * An on-device if/else: returns `thenBody(...thenInputs)` when `condition`
 * (a boolean tensor of one element) is true, else `elseBody(...elseInputs)`,
 * as a list of tensors. The bodies may take different numbers of inputs
 * (none too) and read any tensor of the model; they return the same number
 * of tensors, of the same shapes and dtypes.
 *
 * Inside a model that poptfjs compiles, both bodies are traced once into the
 * subgraphs of a `poptfjs.Cond` node and the device runs the one the
 * condition's value picks each time the model runs. The bodies get copies of
 * their inputs, cannot read values (`dataSync`), write weights, or hand out
 * tensors other than by returning them. As in PopTorch, `cond` is for
 * inference only: a training model using it is refused. Outside a compiled
 * model, the condition is read and the branch it picks runs with tfjs.
 *
 * On the simulated IPU which branch runs is unknown when compiling, so the
 * node costs its longer branch (by cycles) plus a sync to read the
 * condition, and holds the memory of its larger branch.
 */
export function cond(
  condition: tf.Tensor,
  thenBody: (...inputs: tf.Tensor[]) => tf.Tensor | readonly tf.Tensor[],
  thenInputs: readonly tf.Tensor[],
  elseBody: (...inputs: tf.Tensor[]) => tf.Tensor | readonly tf.Tensor[],
  elseInputs: readonly tf.Tensor[],
): tf.Tensor[] {
  const listWhat = `${OP} expects thenInputs and elseInputs tensors`;
  const thenTensors = checkedTensorList(OP, listWhat, thenInputs);
  const elseTensors = checkedTensorList(OP, listWhat, elseInputs);
  const runThen = checkedBody(OP, 'thenBody', thenBody);
  const runElse = checkedBody(OP, 'elseBody', elseBody);
  const predicate = checkCondition(condition);
  const recorder = currentRecorder();
  if (!recorder) {
    return predicate.dataSync()[0] ? bodyOutputs(OP, THEN, runThen(...thenTensors)) : bodyOutputs(OP, ELSE, runElse(...elseTensors));
  }
  if (recorder.training) throw controlFlowError(OP, 'ops.cond() is only supported in inference.');
  const conditionId = recorder.valueFor(predicate);
  const thenTraced = recorder.traceBody(THEN, 'only when the condition is true', thenTensors, (inputs) => bodyOutputs(OP, THEN, runThen(...inputs)));
  const elseTraced = recorder.traceBody(ELSE, 'only when the condition is false', elseTensors, (inputs) => bodyOutputs(OP, ELSE, runElse(...inputs)));
  checkBranches(thenTraced.outputs, elseTraced.outputs);
  return recorder.addControlFlowNode(
    POPTFJS_KERNELS.cond,
    [conditionId, ...thenTraced.inputs, ...elseTraced.inputs],
    {},
    [thenTraced.graph, elseTraced.graph],
    thenTraced.outputs,
  );
}
