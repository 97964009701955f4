/**
 * The names of poptfjs's own kernels: PopTorch's helper ops that are nodes of
 * their own kind in the IR (`poptfjs.*`), as the random draws are.
 */

/** The kernel names of PopTorch's helper ops. */
export const POPTFJS_KERNELS = {
  /** `ops.ipuPrintTensor`: hands its input on and prints it each time it runs on the device. */
  ipuPrintTensor: 'poptfjs.IpuPrintTensor',
  /** `ops.nop`: hands its input on as a copy that no pattern removes. */
  nop: 'poptfjs.Nop',
  /** `half(x)` of a value a model computes: `x` as float16 (its output is a float16 value, which the device rounds). */
  float16Cast: 'poptfjs.Float16Cast',
  /** `ops.customOp`: runs the forward kernel of the registered custom op its attributes name (`name`, `domain`) on its list of inputs. */
  customOp: 'poptfjs.CustomOp',
  /** The backward node of `ops.customOp`: runs the op's gradient kernel on the output gradients, the inputs and the outputs (one list). */
  customOpGradient: 'poptfjs.CustomOpGrad',
  /** `ops.CPU`: copies its list of inputs to the host, runs the host function registered under attribute `id`, and copies its results back. */
  cpuOp: 'poptfjs.CpuOp',
  /** `ops.ctcBeamSearchDecoder`: a CTC prefix beam search over `probs` (log-probabilities [T, N, C]) and `lengths`. */
  ctcBeamSearchDecoder: 'poptfjs.CtcBeamSearchDecoder',
  /**
   * `ops.forLoop`: runs its body `attrs.count` times. Inputs: the loop-carried
   * values (one per output), then the values of the enclosing graph the body
   * reads; the body takes the same inputs and returns the next carried values.
   */
  forLoop: 'poptfjs.ForLoop',
  /**
   * `ops.cond`: runs its then body (`bodies[0]`) when its one-element boolean
   * condition is true, else its else body (`bodies[1]`). Inputs: the
   * condition, then the then body's inputs, then the else body's; both
   * bodies return outputs of the same shapes and dtypes.
   */
  cond: 'poptfjs.Cond',
  /** `ops.dynamicSlice`: a slice of a fixed size at an offset read from a tensor when it runs. */
  dynamicSlice: 'poptfjs.DynamicSlice',
  /** `ops.dynamicUpdate`: a tensor with a slice of a fixed size replaced at an offset read from a tensor when it runs. */
  dynamicUpdate: 'poptfjs.DynamicUpdate',
  /** `ops.serializedMatMul`: a matrix product of rank-3 operands the IPU computes in serial steps (`attrs.mode`, `attrs.factor`). */
  serializedMatMul: 'poptfjs.SerializedMatMul',
  /**
   * A bias `Add` and the `Relu` of its sum in one pass: inputs `a` and `b` (`b` the same shape as `a` or broadcast
   * along its last axes), outputs the sum `a + b` and `relu(a + b)`, as the backend's `Add` then `Relu` compute them.
   */
  addRelu: 'poptfjs.AddRelu',
  /** The gradient of a `Relu` in one pass: `dy · Step(x)` of `dy` and the `Relu`'s input `x`, as `Multiply(dy, Step(x))` computes it. */
  reluGrad: 'poptfjs.ReluGrad',
} as const;

/** One of {@link POPTFJS_KERNELS}. */
export type PoptfjsKernelName = (typeof POPTFJS_KERNELS)[keyof typeof POPTFJS_KERNELS];
