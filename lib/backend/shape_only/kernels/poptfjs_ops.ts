/**
 * Shape rules of poptfjs's own kernels (PopTorch's helper ops,
 * ../../poptfjs_kernels).
 */
import { POPTFJS_KERNELS } from '../../poptfjs_kernels/kernel_names.js';
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';
import type { CustomOpNodeAttrs } from '../../poptfjs_kernels/custom_op_kernels.js';
import type { CtcBeamSearchAttrs } from '../../poptfjs_kernels/ctc_beam_search_kernel.js';
import { unplannableRule } from '../rules/value_dependent_rule.js';

/** The rules of poptfjs's kernels, by kernel name. */
export const POPTFJS_OP_RULES: Readonly<Record<string, KernelShapeRule>> = {
  /** The input's shape and dtype. */
  [POPTFJS_KERNELS.ipuPrintTensor]: (call) => output(call.input('x').shape, call.input('x').dtype),
  /** The input's shape and dtype. */
  [POPTFJS_KERNELS.nop]: (call) => output(call.input('x').shape, call.input('x').dtype),
  /** The input's shape and dtype (float32 holding float16 values). */
  [POPTFJS_KERNELS.float16Cast]: (call) => output(call.input('x').shape, call.input('x').dtype),
  /** The paths' log-probabilities (float32 [N, topPaths]), lengths (int32 [N, topPaths]) and labels (int32 [N, topPaths, T]). */
  [POPTFJS_KERNELS.ctcBeamSearchDecoder]: (call) => {
    const [steps, batch] = call.input('probs').shape as [number, number];
    const { topPaths } = call.attrsAs<CtcBeamSearchAttrs>();
    return [output([batch, topPaths], 'float32'), output([batch, topPaths], 'int32'), output([batch, topPaths, steps], 'int32')];
  },
  /** `ops.CPU`: its outputs are whatever its host function makes of the values, which a plan does not have. */
  [POPTFJS_KERNELS.cpuOp]: unplannableRule("its outputs are what the CPU op's host function returns for the values of its inputs"),
  /** The shapes and dtypes of the call's example outputs. */
  [POPTFJS_KERNELS.customOp]: (call) => {
    const { outputShapes, outputDtypes } = call.attrsAs<CustomOpNodeAttrs>();
    return outputShapes.map((shape, i) => output(shape, outputDtypes[i]!));
  },
  /** The shapes and dtypes of the op's inputs (the list's middle part, between the output gradients and the outputs). */
  [POPTFJS_KERNELS.customOpGradient]: (call) => {
    const list = call.inputList();
    const outputs = call.attrsAs<CustomOpNodeAttrs>().outputShapes.length;
    return list.slice(outputs, list.length - outputs).map((x) => output(x.shape, x.dtype));
  },
  /** The input's shape with `ceil(size / step)` elements along `dim`. */
  [POPTFJS_KERNELS.dynamicSlice]: (call) => {
    const { dim, size, step } = call.attrs as unknown as { dim: number; size: number; step: number };
    const x = call.input('x');
    return output(
      x.shape.map((n, d) => (d === dim ? Math.ceil(size / step) : n)),
      x.dtype,
    );
  },
  /** The shape and dtype of the tensor updated. */
  [POPTFJS_KERNELS.dynamicUpdate]: (call) => output(call.input('x').shape, call.input('x').dtype),
  /** The sum and its relu, each of `a`'s shape. */
  [POPTFJS_KERNELS.addRelu]: (call) => [output(call.input('a').shape, 'float32'), output(call.input('a').shape, 'float32')],
  /** `dy`'s shape. */
  [POPTFJS_KERNELS.reluGrad]: (call) => output(call.input('dy').shape, 'float32'),
  /** `[g, m, n]` from `[g, m, k]` and `[g, k, n]`. */
  [POPTFJS_KERNELS.serializedMatMul]: (call) => {
    const [g, m] = call.input('a').shape;
    return output([g!, m!, call.input('b').shape[2]!], call.input('a').dtype);
  },
};
