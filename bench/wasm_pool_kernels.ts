/**
 * The measurement behind the automatic wasm thread choice's threshold
 * (`POOL_KERNEL_FLOPS`, lib/runtime/wasm_thread_choice.ts): kernels of
 * growing size on one thread and on the whole pool, in this process,
 * switching the pool off and on between the cases (the process must start
 * its backend on the automatic thread count: `POPTFJS_WASM_THREADS` unset).
 * The verdict gives each kernel's pool / one-thread ratio with its FLOPs as
 * the cost model counts them, and the smallest FLOPs from which the pool is
 * faster for every larger kernel measured.
 */
import { computeOnWasmThreads, switchableWasmThreads } from '../lib/backend/wasm_thread_pool.js';
import { tf } from 'poptfjs';
import type { Benchmark } from './benchmark.js';
import type { BenchCase, BenchResult } from './side_by_side.js';

/** One kernel on one problem: its row label, its FLOPs and a call that runs it. */
interface PoolProblem {
  readonly label: string;
  readonly flops: number;
  make(): () => void;
}

function matMul(m: number, k: number, n: number): PoolProblem {
  return {
    label: `MatMul ${m}×${k}·${k}×${n}`,
    flops: 2 * m * k * n,
    make() {
      const a = tf.randomNormal([m, k], 0, 1, 'float32', 1);
      const b = tf.randomNormal([k, n], 0, 1, 'float32', 2);
      return () => tf.tidy(() => void tf.matMul(a, b).dataSync());
    },
  };
}

function conv(size: number, inChannels: number, outChannels: number): PoolProblem {
  return {
    label: `Conv2D 3×3 [64,${size},${size},${inChannels}]→${outChannels}`,
    flops: 2 * 9 * inChannels * outChannels * 64 * size * size,
    make() {
      const x = tf.randomNormal([64, size, size, inChannels], 0, 1, 'float32', 1) as tf.Tensor4D;
      const w = tf.randomNormal([3, 3, inChannels, outChannels], 0, 1, 'float32', 2) as tf.Tensor4D;
      return () => tf.tidy(() => void tf.conv2d(x, w, 1, 'same').dataSync());
    },
  };
}

function relu(elements: number): PoolProblem {
  return {
    label: `Relu ${elements}`,
    flops: elements,
    make() {
      const x = tf.randomNormal([elements], 0, 1, 'float32', 1);
      return () => tf.tidy(() => void tf.relu(x).dataSync());
    },
  };
}

const PROBLEMS: PoolProblem[] = [
  relu(10_000),
  relu(100_000),
  relu(1_000_000),
  matMul(64, 64, 64),
  matMul(64, 128, 128),
  matMul(64, 256, 256),
  matMul(64, 512, 512),
  matMul(64, 784, 512),
  matMul(64, 1024, 1024),
  conv(8, 4, 8),
  conv(14, 4, 8),
  conv(28, 1, 16),
  conv(14, 16, 32),
  conv(28, 16, 16),
];

const ONE = '1 thread';
const POOL = 'pool';

/** The verdict: each problem's ratio, then the threshold the measurement supports. */
function poolVerdict(results: readonly BenchResult[]): string {
  const rows = PROBLEMS.map((p) => {
    const ms = (threads: string) => results.find((r) => r.name === `${p.label}, ${threads}`)!.medianMs;
    return { p, ratio: ms(POOL) / ms(ONE) };
  }).sort((a, b) => a.p.flops - b.p.flops);
  const lines = rows.map(({ p, ratio }) => `  ${p.label} (${(p.flops / 1e6).toFixed(2)} MFLOP): pool / 1 thread = ${ratio.toFixed(2)}`);
  const firstOfWins = rows.findIndex((_, i) => rows.slice(i).every((r) => r.ratio < 1));
  const threshold = firstOfWins < 0 ? 'none of the kernels measured' : `${(rows[firstOfWins]!.p.flops / 1e6).toFixed(2)} MFLOP`;
  return [...lines, `the pool is faster for every kernel from ${threshold}`].join('\n');
}

/** The benchmark, `rounds` timed rounds. */
export function wasmPoolKernelsBenchmark(rounds: number): Benchmark {
  return {
    title: "wasm kernels on one thread and on the pool (the automatic thread choice's threshold)",
    rounds,
    warmup: 2,
    async cases() {
      const threads = switchableWasmThreads();
      if (threads === undefined)
        throw new Error('the wasm pool cannot be switched here: run on the wasm backend with POPTFJS_WASM_THREADS unset on a machine of 2 cores or more');
      return PROBLEMS.flatMap((p): BenchCase[] => {
        const run = p.make();
        return [
          { name: `${p.label}, ${ONE}`, step: () => (computeOnWasmThreads(1), run()) },
          { name: `${p.label}, ${POOL}`, step: () => (computeOnWasmThreads(threads), run()) },
        ];
      });
    },
    verdict: poolVerdict,
  };
}
