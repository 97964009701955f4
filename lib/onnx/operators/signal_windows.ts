/**
 * Window functions of signal processing (opset 17): HannWindow,
 * HammingWindow and BlackmanWindow, computed at import from the window size.
 */
import { hostNumbers, hostTensor } from '../proto/host_tensor.js';
import { OnnxElementType } from '../proto/onnx_element_type.js';
import type { ImportTimeImplementation, OperatorFamily } from './operator.js';

/** A cosine-sum window `sum_k (-1)^k a_k cos(2 pi k n / N)`, periodic (N = size) or symmetric (N = size - 1). */
function cosineSum(coefficients: readonly number[]): ImportTimeImplementation {
  return (call) => {
    const size = hostNumbers(call.constantInput(0))[0]!;
    const periodic = call.attrs.int('periodic', 1) === 1;
    const n = periodic ? size : size - 1;
    const values = Array.from({ length: size }, (_, i) => coefficients.reduce((sum, a, k) => sum + (k % 2 === 0 ? a : -a) * Math.cos((2 * Math.PI * k * i) / n), 0));
    return [hostTensor(call.attrs.int('output_datatype', OnnxElementType.FLOAT), [size], values)];
  };
}

/** Window function operators. */
export const SIGNAL_WINDOW_OPERATORS: OperatorFamily = {
  HannWindow: [{ since: 17, atImport: cosineSum([0.5, 0.5]) }],
  HammingWindow: [{ since: 17, atImport: cosineSum([25 / 46, 21 / 46]) }],
  BlackmanWindow: [{ since: 17, atImport: cosineSum([0.42, 0.5, 0.08]) }],
};
