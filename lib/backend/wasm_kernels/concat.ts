/**
 * `Concat` for the wasm backend: each input's parts of the rows copied
 * within the heap by a WebAssembly SIMD routine (concat_rows_simd.ts), or
 * where the engine has none, by `copyWithin` or one stack and one transpose.
 *
 * The wasm backend's own `Concat` copies each input's part of each row in
 * turn, one typed-array copy per part, each through a new view of the heap:
 * joining two `[1, 55, 55, 64]` channels-last tensors along their channels
 * (a SqueezeNet fire module) makes 6050 copies of 64 elements, 0.32 ms.
 * The SIMD routine copies all of an input's parts in one call. Without it,
 * a part of at least {@link WIDE_PART} elements is moved with `copyWithin`
 * on the heap itself (no view made): 0.15 ms there. Narrower parts of inputs
 * of one shape are stacked (one contiguous copy each) and the stack's first
 * two axes swapped by the backend's C++ `Transpose`: 0.03 against 0.15 ms
 * for three `[1000, 8]` matrices side by side. Other concatenations (narrow
 * parts of different sizes, a single row, other dtypes) keep the backend's
 * kernel.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { OwnWasmKernel } from './own_wasm_kernel.js';
import { concatRowsSimd } from './concat_rows_simd.js';
import { KernelCallScope } from './kernel_call_scope.js';
import { wasmMemory } from './wasm_simd_routine.js';

const BACKEND = 'wasm';

/** The wasm backend's own `Concat` (registered by the import above), which this kernel replaces and calls. */
const OWN_CONCAT = new OwnWasmKernel(tf.Concat);

/** The dtypes handled here, all of 4-byte elements (those the wasm `Transpose` moves). */
const HANDLED_DTYPES: ReadonlySet<tf.DataType> = new Set(['float32', 'int32']);

/** The bytes of an element of a handled dtype. */
const ELEMENT_BYTES = 4;

/**
 * The narrowest part of a row moved by `copyWithin` (measured: 64-element
 * parts 0.15 against 0.22 ms for the stack and transpose, 8-element parts
 * 0.05 against 0.03 ms).
 */
export const WIDE_PART = 32;

/** The wasm module's memory as bytes (current after any growth). */
interface EmscriptenHeap {
  readonly HEAPU8: Uint8Array;
}

/**
 * Joins `inputs`, `rows` rows of `parts[i]` elements each, by the SIMD
 * routine, one call per input; undefined (nothing made) where the engine has
 * no WebAssembly SIMD.
 */
function simdCopiedRows(backend: BackendWasm, inputs: readonly tf.TensorInfo[], rows: number, parts: readonly number[], outShape: number[]): tf.TensorInfo | undefined {
  const copy = concatRowsSimd(wasmMemory(backend));
  if (copy === undefined) return undefined;
  const out = backend.makeOutput(outShape, inputs[0]!.dtype);
  const width = parts.reduce((n, part) => n + part, 0);
  let at = backend.dataIdMap.get(out.dataId)!.memoryOffset;
  inputs.forEach((x, i) => {
    copy(backend.dataIdMap.get(x.dataId)!.memoryOffset, at, rows, parts[i]!, width);
    at += parts[i]! * ELEMENT_BYTES;
  });
  return out;
}

/** Joins `inputs`, `rows` rows of `parts[i]` elements each, by copying each part within the heap. */
function copiedRows(backend: BackendWasm, inputs: readonly tf.TensorInfo[], rows: number, parts: readonly number[], outShape: number[]): tf.TensorInfo {
  const out = backend.makeOutput(outShape, inputs[0]!.dtype);
  const heap = (backend.wasm as unknown as EmscriptenHeap).HEAPU8;
  const rowBytes = parts.reduce((n, part) => n + part, 0) * ELEMENT_BYTES;
  const target = backend.dataIdMap.get(out.dataId)!.memoryOffset;
  const sources = inputs.map((x) => backend.dataIdMap.get(x.dataId)!.memoryOffset);
  const partBytes = parts.map((part) => part * ELEMENT_BYTES);
  for (let r = 0; r < rows; r++) {
    let at = target + r * rowBytes;
    for (let i = 0; i < sources.length; i++) {
      const from = sources[i]! + r * partBytes[i]!;
      heap.copyWithin(at, from, from + partBytes[i]!);
      at += partBytes[i]!;
    }
  }
  return out;
}

function concat(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const own = OWN_CONCAT.get();
  const inputs = args.inputs as unknown as tf.TensorInfo[];
  const first = inputs[0];
  if (first === undefined || inputs.length < 2 || !inputs.every((x) => HANDLED_DTYPES.has(x.dtype) && x.dtype === first.dtype)) return own.kernelFunc(args);
  const [axis] = tf.util.parseAxisParam((args.attrs as unknown as tf.ConcatAttrs).axis, first.shape) as [number];
  const shapes = inputs.map((x) => x.shape);
  tf.backend_util.assertParamsConsistent(shapes, axis);
  const rows = tf.util.sizeFromShape(first.shape.slice(0, axis));
  const parts = shapes.map((shape) => tf.util.sizeFromShape(shape.slice(axis)));
  if (rows <= 1 || parts.some((part) => part === 0)) return own.kernelFunc(args);
  const outShape = tf.backend_util.computeOutShape(shapes, axis);
  const backend = args.backend as BackendWasm;
  const joined = simdCopiedRows(backend, inputs, rows, parts, outShape);
  if (joined !== undefined) return joined;
  if (Math.min(...parts) >= WIDE_PART) return copiedRows(backend, inputs, rows, parts, outShape);
  if (!parts.every((part) => part === parts[0])) return own.kernelFunc(args);
  return KernelCallScope.run(BACKEND, backend, (k) => {
    const stacked = k.callKernel(
      own,
      inputs.map((x) => k.reshape(x, [1, rows, parts[0]!])),
      { axis: 0 },
    );
    return k.reshape(k.transpose(stacked, [1, 0, 2]), outShape);
  });
}

/** The wasm kernel of `Concat`: parts of rows copied within the heap (by a SIMD routine, or `copyWithin`), or a stack and a transpose, else the backend's own. */
export const concatConfig: tf.KernelConfig = {
  kernelName: tf.Concat,
  backendName: BACKEND,
  kernelFunc: concat,
};
