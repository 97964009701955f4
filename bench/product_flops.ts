/**
 * The floating-point work of a model's convolutions and matrix products,
 * counted at the kernels one run calls, and the least time it could take
 * at WebAssembly's fused multiply-add peak: the bound the ONNX session
 * table sets beside onnxruntime's time.
 */
import { tf } from 'poptfjs';
import { markedWinogradShape } from '../lib/backend/wasm_kernels/fused_conv2d.js';
import { winogradMultiplyAdds } from '../lib/backend/wasm_kernels/winograd_convolution.js';
import { get, i32, loop, memory, ones, relaxedSimdSupported, set, SimdOp, simd, simdRoutine, wasmMemory, zeros } from '../lib/backend/wasm_kernels/wasm_simd_routine.js';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { median } from './side_by_side.js';

/** Multiply-adds per output element of each counted kernel, from its inputs. */
const MULTIPLY_ADDS_PER_OUTPUT: Readonly<Record<string, (inputs: Record<string, tf.TensorInfo>, attrs: Record<string, unknown>) => number>> = {
  Conv2D: ({ filter }) => filter!.shape[0]! * filter!.shape[1]! * filter!.shape[2]!,
  FusedConv2D: ({ filter }) => filter!.shape[0]! * filter!.shape[1]! * filter!.shape[2]!,
  DepthwiseConv2dNative: ({ filter }) => filter!.shape[0]! * filter!.shape[1]!,
  FusedDepthwiseConv2D: ({ filter }) => filter!.shape[0]! * filter!.shape[1]!,
  BatchMatMul: ({ a }, { transposeA }) => a!.shape[a!.shape.length - (transposeA === true ? 2 : 1)]!,
  _FusedMatMul: ({ a }, { transposeA }) => a!.shape[a!.shape.length - (transposeA === true ? 2 : 1)]!,
};

/**
 * The FLOPs (2 per multiply-add, taps in the padding included) of the
 * convolution and matrix-product kernels that one call of `run` calls on
 * the current backend; a marked 3 × 3 convolution that runs by F(2 × 2,
 * 3 × 3) counts the multiply-adds of its 16 products (its transforms add
 * and subtract).
 */
export async function productFlops(run: () => unknown): Promise<number> {
  const backend = tf.getBackend();
  let flops = 0;
  const restore: (() => void)[] = [];
  for (const [name, perOutput] of Object.entries(MULTIPLY_ADDS_PER_OUTPUT)) {
    const kernel = tf.getKernel(name, backend) as { kernelFunc: tf.KernelFunc } | undefined;
    if (kernel === undefined) continue;
    const own = kernel.kernelFunc;
    kernel.kernelFunc = (args) => {
      const out = own(args) as tf.TensorInfo;
      const winograd = name === 'FusedConv2D' && backend === 'wasm' && relaxedSimdSupported() ? markedWinogradShape(args) : undefined;
      const multiplyAdds = winograd
        ? winogradMultiplyAdds(winograd)
        : perOutput(args.inputs as Record<string, tf.TensorInfo>, args.attrs as Record<string, unknown>) * tf.util.sizeFromShape(out.shape);
      flops += 2 * multiplyAdds;
      return out;
    };
    restore.push(() => {
      kernel.kernelFunc = own;
    });
  }
  try {
    await run();
  } finally {
    for (const undo of restore) undo();
  }
  return flops;
}

/** Independent accumulators of the peak loop: more than a fused multiply-add's latency times the units that issue them. */
const CHAINS = 12;

/**
 * GFLOP/s of one thread running nothing but `f32x4.relaxed_madd`s on
 * independent accumulators in registers: the most any WebAssembly kernel
 * computes on this processor (two 4-lane fused multiply-adds a cycle on
 * this project's x86 machines). Undefined where the engine refuses relaxed
 * SIMD or the backend is not wasm.
 */
export function fusedMultiplyAddPeak(): number | undefined {
  if (tf.getBackend() !== 'wasm') return undefined;
  const wasm = tf.backend() as BackendWasm;
  // Parameters: the output's byte address, the iterations. Locals: the counter; v128: the accumulators, the operands.
  const OUT = 0,
    N = 1,
    I = 2,
    ACC = 3,
    A = ACC + CHAINS,
    B = A + 1;
  const chains = [...new Array<number>(CHAINS).keys()];
  const routine = simdRoutine(wasmMemory(wasm), {
    name: 'multiply-add peak',
    params: 2,
    i32Locals: 1,
    v128Locals: CHAINS + 2,
    body: [
      ...ones,
      ...set(A),
      ...ones,
      ...set(B),
      ...chains.flatMap((c) => [...zeros, ...set(ACC + c)]),
      ...loop(
        I,
        i32(0),
        get(N),
        i32(1),
        chains.flatMap((c) => [...get(A), ...get(B), ...get(ACC + c), ...simd(SimdOp.F32x4RelaxedMadd), ...set(ACC + c)]),
      ),
      ...chains.flatMap((c) => [...get(OUT), ...get(ACC + c), ...memory(SimdOp.Store)]),
    ],
  });
  if (routine === undefined) return undefined;
  const out = wasm.makeOutput([4], 'float32');
  try {
    const address = wasm.typedArrayFromHeap(out).byteOffset;
    const iterations = 2_000_000;
    for (let i = 0; i < 3; i++) routine(address, iterations);
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const start = performance.now();
      routine(address, iterations);
      times.push(performance.now() - start);
    }
    return (iterations * CHAINS * 8) / median(times) / 1e6;
  } finally {
    wasm.disposeData(out.dataId);
  }
}
