/**
 * Which threads the wasm backend's kernels compute on in a run, when
 * `POPTFJS_WASM_THREADS` does not fix them (see wasm_thread_pool.ts).
 *
 * A kernel of the graph computes on the whole thread pool when the cost
 * model gives it at least {@link POOL_KERNEL_FLOPS}, or it is a convolution,
 * matrix product or pooling that moves at least {@link POOL_KERNEL_BYTES}, and the machine leaves
 * the pool's threads their cores; every other kernel of a call (small graph
 * kernels, the gradient sums, the optimizer step) computes on the calling
 * thread alone. Handing a kernel to the pool costs a wake-up of its threads
 * (microseconds to 0.1 ms when their cores are idle) and, when other
 * processes hold the cores, a wait for a scheduler time slice (0.2 ms to
 * several ms per kernel, measured on a busy 2-core machine, where the pool
 * then loses even on 100-MFLOP kernels): small models run as on one thread,
 * large kernels on all cores.
 */
import { availableParallelism } from 'node:os';
import { CoresBusyElsewhere } from '../backend/cores_busy_elsewhere.js';
import { switchableWasmThreads } from '../backend/wasm_thread_pool.js';
import { POPTFJS_KERNELS } from '../backend/kernel_catalogue/kernel_catalogue.js';
import type { Graph, Node } from '../ir/graph.js';
import { nodeCost } from '../ir/node_cost.js';

/**
 * The FLOPs from which a kernel computes on the pool. Measured with
 * `BENCH_ONLY="wasm kernels on one thread"` (bench/wasm_pool_kernels.ts;
 * bench/RESULTS.md has a run) on 2 cores: from 2 MFLOP (0.1–0.4 ms on one
 * thread) the pool is faster for every matrix product and convolution
 * measured (0.26–0.83 of the one-thread time), while below 1 MFLOP it gains
 * little or loses (0.75–1.18); 4 MFLOP keeps a margin for the hand-over,
 * which is dearer on a loaded machine.
 */
export const POOL_KERNEL_FLOPS = 4e6;

/**
 * The bytes (read and written) from which a convolution, matrix product or
 * pooling computes on the pool whatever its FLOPs: depthwise convolutions,
 * matrix–vector products and poolings do a FLOP or two per byte, so on one
 * thread they take as long as dense products of several times their FLOPs.
 * Measured in mobilenet_v2's session on 2 cores: the depthwise convolutions of
 * [1, 28, 28, 192] (1.2 MB, 2.7 MFLOP) and [1, 14, 14, 384] (0.6 MB, 1.4 MFLOP)
 * take 0.19 and 0.09 ms on one thread, 0.09 and 0.05 ms on the pool; its
 * classifier, 1280 by 1280 × 1000 (5.1 MB, 2.6 MFLOP), 0.40 and 0.22 ms. In
 * squeezenet1_1's, the 3 × 3 max poolings of [1, 111, 111, 64] (3.9 MB) and
 * [1, 55, 55, 64] (1.0 MB) take 0.32 and 0.05 ms on one thread, 0.19 and
 * 0.03 ms on the pool.
 */
export const POOL_KERNEL_BYTES = 512 * 1024;

/** The forward poolings, which XNNPACK spreads over the pool. */
const POOLINGS: ReadonlySet<string> = new Set(['MaxPool', 'AvgPool']);

/** Convolutions and matrix products (forward and gradients) and forward poolings, which XNNPACK spreads over the pool. */
function spreadByXnnpack(kernel: string): boolean {
  return kernel.includes('Conv2D') || kernel.includes('Conv2d') || kernel.includes('MatMul') || POOLINGS.has(kernel);
}

/**
 * Kernels computed by poptfjs's own WebAssembly SIMD routines, which split a
 * call between the calling thread and a helper thread when the kernel may
 * compute on the pool's threads (simd_routine_threads.ts): passes over
 * memory, worth both cores from {@link POOL_KERNEL_BYTES} whatever their FLOPs.
 */
const SPLIT_ROUTINE_KERNELS: ReadonlySet<string> = new Set([POPTFJS_KERNELS.addRelu, POPTFJS_KERNELS.reluGrad, 'MaxPoolGrad']);

/** Whether the cost model makes `node` (not a control-flow node: their bodies choose for themselves) large enough for the pool. */
export function worthThePool(graph: Graph, node: Node): boolean {
  if (node.bodies !== undefined) return false;
  const { flops, bytes } = nodeCost(graph, node);
  return flops >= POOL_KERNEL_FLOPS || ((spreadByXnnpack(node.kernel) || SPLIT_ROUTINE_KERNELS.has(node.kernel)) && bytes >= POOL_KERNEL_BYTES);
}

/**
 * Whether a pool of `poolThreads` finds its cores on a machine of `cores`
 * where other processes keep `busyElsewhere` cores busy: they leave it all
 * but half a core.
 */
export function poolFindsCores(cores: number, poolThreads: number, busyElsewhere: number): boolean {
  return busyElsewhere <= cores - poolThreads + 0.5;
}

let busyElsewhere: CoresBusyElsewhere | undefined;

/**
 * The threads a run's large kernels compute on: the pool's when it can be
 * switched and finds its cores now, 1 when it cannot find them, undefined
 * when it cannot be switched (the thread count is what the backend has).
 * When it answers a count, the run's large kernels have started: the run
 * calls {@link largeKernelsDone} once they are over, so that cores busy
 * elsewhere are counted while the run computes and not while it waits.
 */
export function largeKernelThreads(): number | undefined {
  const threads = switchableWasmThreads();
  if (threads === undefined) return undefined;
  busyElsewhere ??= new CoresBusyElsewhere();
  return poolFindsCores(availableParallelism(), threads, busyElsewhere.start()) ? threads : 1;
}

/** Ends the interval of large kernels that {@link largeKernelThreads} started. */
export function largeKernelsDone(): void {
  busyElsewhere?.stop();
}
