/**
 * Whether a model is being traced. Kernels that read a run-time value, such
 * as the offset of a dynamic slice, then see the example value the model was
 * called with for compiling, which need not be one the model will run with
 * (PopTorch compiles a dynamic slice with any example offset and checks the
 * offset when the model runs): they compute something of the right shape
 * instead of refusing it.
 */

let depth = 0;

/** A model's trace starts; call the returned function when it ends. */
export function enterModelTrace(): () => void {
  depth++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    depth--;
  };
}

/** True while a model is being traced. */
export function isTracingModel(): boolean {
  return depth > 0;
}
