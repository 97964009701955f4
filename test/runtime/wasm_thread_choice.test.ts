import * as tf from '@tensorflow/tfjs';
import { availableParallelism } from 'node:os';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { initBackend } from '../../lib/backend/backend_selection.js';
import { POPTFJS_KERNELS } from '../../lib/backend/poptfjs_kernels/kernel_names.js';
import { coresBusyElsewhere, CoresBusyElsewhere, MIN_WINDOW_MS, readCpu, type CpuReading } from '../../lib/backend/cores_busy_elsewhere.js';
import { wasmComputeThreads } from '../../lib/backend/wasm_thread_pool.js';
import { MAX_WASM_THREADS } from '../../lib/backend/wasm_threads.js';
import { nodeCost, nodeFlops } from '../../lib/ir/node_cost.js';
import { applyPatterns, Patterns } from '../../lib/ir/patterns/patterns.js';
import { GraphInterpreter } from '../../lib/runtime/graph_interpreter.js';
import { RandomSource } from '../../lib/executable/random_source.js';
import { POOL_KERNEL_BYTES, POOL_KERNEL_FLOPS, poolFindsCores, worthThePool } from '../../lib/runtime/wasm_thread_choice.js';
import { traceInference, traceTraining } from '../../lib/trace/trace_model.js';
import { smallCnn } from '../helpers.js';

/** A graph with one large matrix product (64×512·512×512: 33.5 MFLOP) and small element-wise kernels. */
function largeAndSmall() {
  const x = tf.randomNormal([64, 512], 0, 1, 'float32', 1);
  const w = tf.randomNormal([512, 512], 0, 1, 'float32', 2);
  const { graph } = traceInference((input: tf.Tensor) => tf.relu(tf.add(tf.matMul(input, w), tf.scalar(1))).sum(), [x]);
  return { graph, x };
}

describe('which kernels the cost model sends to the wasm pool', () => {
  beforeAll(async () => {
    await initBackend('wasm');
  });

  it('the kernels of at least POOL_KERNEL_FLOPS, and no others', () => {
    const { graph } = largeAndSmall();
    const chosen = graph.nodes.map((n) => [n.kernel, worthThePool(graph, n)] as const);
    expect(chosen.filter(([, pool]) => pool).map(([kernel]) => kernel)).toEqual(['BatchMatMul']);
    const matMul = graph.nodes.find((n) => n.kernel === 'BatchMatMul')!;
    expect(nodeFlops(graph, matMul)).toBe(2 * 64 * 512 * 512);
    expect(POOL_KERNEL_FLOPS).toBeLessThan(2 * 64 * 512 * 512);
    expect(graph.nodes.filter((n) => n !== matMul).every((n) => nodeFlops(graph, n) < POOL_KERNEL_FLOPS)).toBe(true);
  });

  it('convolutions and matrix products of fewer FLOPs that move at least POOL_KERNEL_BYTES, and no element-wise kernel', () => {
    const image = tf.randomNormal([1, 28, 28, 192], 0, 1, 'float32', 3);
    const depthwiseFilter = tf.randomNormal([3, 3, 192, 1], 0, 1, 'float32', 4);
    const features = tf.randomNormal([1, 1280], 0, 1, 'float32', 5);
    const classifier = tf.randomNormal([1280, 1000], 0, 1, 'float32', 6);
    const small = tf.randomNormal([16, 16], 0, 1, 'float32', 7);
    const { graph } = traceInference(
      (x: tf.Tensor4D, v: tf.Tensor2D, s: tf.Tensor2D) => [
        tf.depthwiseConv2d(x, depthwiseFilter as tf.Tensor4D, 1, 'same'),
        tf.matMul(v, classifier),
        tf.relu(x),
        tf.matMul(s, s),
      ],
      [image, features, small],
    );
    const cost = (kernel: string) => nodeCost(graph, graph.nodes.find((n) => n.kernel === kernel)!);
    const pooled = (kernel: string) => graph.nodes.filter((n) => n.kernel === kernel).map((n) => worthThePool(graph, n));
    // 28·28·192 outputs × 9 taps × 2: 2.7 MFLOP over 1.2 MB; 1280 × 1000 × 2: 2.6 MFLOP over 5.1 MB.
    expect(cost('DepthwiseConv2dNative')).toEqual({ flops: 2 * 9 * 28 * 28 * 192, bytes: 4 * (2 * 28 * 28 * 192 + 9 * 192) });
    expect(cost('DepthwiseConv2dNative').flops).toBeLessThan(POOL_KERNEL_FLOPS);
    expect(cost('Relu').bytes).toBeGreaterThan(POOL_KERNEL_BYTES);
    expect(pooled('DepthwiseConv2dNative')).toEqual([true]);
    expect(pooled('BatchMatMul')).toEqual([true, false]);
    expect(pooled('Relu')).toEqual([false]);
  });

  it('max and average poolings that move at least POOL_KERNEL_BYTES, and the max-pooling gradient (a split SIMD routine)', () => {
    const image = tf.randomNormal([1, 111, 111, 64], 0, 1, 'float32', 8);
    const smallImage = tf.randomNormal([1, 27, 27, 128], 0, 1, 'float32', 9);
    const { graph } = traceInference(
      (x: tf.Tensor4D, s: tf.Tensor4D) => [tf.maxPool(x, 3, 2, 'valid'), tf.avgPool(x, 3, 2, 'valid'), tf.maxPool(s, 3, 2, 'valid')],
      [image, smallImage],
    );
    const pooled = (kernel: string) => graph.nodes.filter((n) => n.kernel === kernel).map((n) => worthThePool(graph, n));
    const [large, small] = graph.nodes.filter((n) => n.kernel === 'MaxPool').map((n) => nodeCost(graph, n));
    // 111·111·64 in and 55·55·64 out: 3.9 MB and 0.8 MFLOP; 27·27·128 in and 13·13·128 out: 0.46 MB.
    expect(large!.flops).toBeLessThan(POOL_KERNEL_FLOPS);
    expect(large!.bytes).toBeGreaterThanOrEqual(POOL_KERNEL_BYTES);
    expect(small!.bytes).toBeLessThan(POOL_KERNEL_BYTES);
    expect(pooled('MaxPool')).toEqual([true, false]);
    expect(pooled('AvgPool')).toEqual([true]);
    expect(worthThePool(graph, { ...graph.nodes.find((n) => n.kernel === 'MaxPool')!, kernel: 'MaxPoolGrad' })).toBe(true);
    expect(worthThePool(graph, { ...graph.nodes.find((n) => n.kernel === 'AvgPool')!, kernel: 'AvgPoolGrad' })).toBe(false);
  });

  it.skipIf(Math.min(availableParallelism(), MAX_WASM_THREADS) < 2 || process.env.POPTFJS_WASM_THREADS !== undefined)(
    'runs the small kernels on one thread, the large one on the pool or, when the cores are taken, on one, and puts back the threads of before',
    () => {
      const { graph, x } = largeAndSmall();
      const seen: Array<[string, number | undefined]> = [];
      const interpreter = new GraphInterpreter(graph, { beforeKernel: (node) => seen.push([node.kernel, wasmComputeThreads()]) });
      const before = wasmComputeThreads();
      const out = interpreter.run({ inputs: [x], params: new Map(), random: new RandomSource(0) });
      const pool = Math.min(availableParallelism(), MAX_WASM_THREADS);
      expect(before).toBe(pool);
      expect(wasmComputeThreads()).toBe(before);
      for (const [kernel, threads] of seen) expect(threads, kernel).toBe(kernel === 'BatchMatMul' ? threads : 1);
      expect([1, pool]).toContain(seen.find(([kernel]) => kernel === 'BatchMatMul')![1]);
      expect(seen.filter(([, threads]) => threads === 1).length).toBeGreaterThanOrEqual(seen.length - 1);
      tf.dispose([...out.values()]);
      interpreter.dispose();
    },
  );
});

describe("the passes of poptfjs's SIMD routines", () => {
  beforeAll(async () => {
    await initBackend('wasm');
  });

  /** The kernels of the fused training step of a CNN (conv 16, max pool, conv 32, dense 10 on 28×28×1) on `batch` images that the pool gets. */
  function pooledKernels(batch: number): string[] {
    const model = smallCnn();
    const { graph } = traceTraining(model, 'categoricalCrossentropy', [tf.zeros([batch, 28, 28, 1]), tf.zeros([batch, 10])]);
    const { graph: fused } = applyPatterns(graph, new Patterns('Default'), { backend: 'wasm', training: true });
    return [...new Set(fused.nodes.filter((n) => worthThePool(fused, n)).map((n) => n.kernel))];
  }

  it('go to the pool (a helper thread computes a part) from POOL_KERNEL_BYTES: a CNN step of 64 images, not of 2', () => {
    const passes = [POPTFJS_KERNELS.addRelu, POPTFJS_KERNELS.reluGrad, 'MaxPoolGrad'];
    expect(pooledKernels(64)).toEqual(expect.arrayContaining(passes));
    expect(pooledKernels(2).filter((kernel) => passes.includes(kernel))).toEqual([]);
  });
});

describe.skipIf(Math.min(availableParallelism(), MAX_WASM_THREADS) < 2 || process.env.POPTFJS_WASM_THREADS !== undefined)(
  "reading the machine's CPU counters for the choice",
  () => {
    beforeAll(async () => {
      await initBackend('wasm');
    });

    /** How often a run of `graph` reads this process's CPU time. */
    function cpuReadings(graph: ReturnType<typeof largeAndSmall>['graph'], x: tf.Tensor): number {
      const interpreter = new GraphInterpreter(graph);
      const cpuUsage = vi.spyOn(process, 'cpuUsage');
      try {
        tf.dispose([...interpreter.run({ inputs: [x], params: new Map(), random: new RandomSource(0) }).values()]);
        return cpuUsage.mock.calls.length;
      } finally {
        cpuUsage.mockRestore();
        interpreter.dispose();
      }
    }

    it('happens at the first large kernel of a run and at its end, and not in a run of small kernels alone', () => {
      const { graph, x } = largeAndSmall();
      const small = tf.randomNormal([16, 16], 0, 1, 'float32', 8);
      const smallOnly = traceInference((input: tf.Tensor) => tf.relu(tf.matMul(input, input)).sum(), [small]).graph;
      expect(smallOnly.nodes.some((n) => worthThePool(smallOnly, n))).toBe(false);
      expect(cpuReadings(graph, x)).toBe(2); // at the first large kernel and at the end
      expect(cpuReadings(smallOnly, small)).toBe(0);
    });
  },
);

describe('whether the pool finds its cores', () => {
  it('needs every core of the pool but half a core free of other processes', () => {
    expect(poolFindsCores(2, 2, 0)).toBe(true);
    expect(poolFindsCores(2, 2, 0.5)).toBe(true);
    expect(poolFindsCores(2, 2, 0.6)).toBe(false);
    expect(poolFindsCores(8, 4, 4.4)).toBe(true);
    expect(poolFindsCores(8, 4, 4.6)).toBe(false);
  });
});

describe('the cores other processes keep busy', () => {
  const reading = (wallMs: number, machineBusyMs: number, processMs: number): CpuReading => ({ wallMs, machineBusyMs, processMs });

  it("is the machine's busy time less this process's, over the wall time", () => {
    // 1 s: the machine's cores were busy 1.5 s together, this process 0.5 s of it.
    expect(coresBusyElsewhere(reading(0, 1000, 200), reading(1000, 2500, 700))).toBe(1);
    // This process alone: nothing elsewhere (a reading of this process ahead of the machine's counters is no negative load).
    expect(coresBusyElsewhere(reading(0, 0, 0), reading(500, 400, 450))).toBe(0);
    expect(coresBusyElsewhere(reading(10, 0, 0), reading(10, 100, 0))).toBe(0);
  });

  /** A measure over `readings`, read in turn at each start and stop. */
  function measureOver(readings: CpuReading[]) {
    let reads = 0;
    const busy = new CoresBusyElsewhere(() => readings[reads++]!);
    return { busy, reads: () => reads };
  }

  it('is measured over intervals of computing summing to at least MIN_WINDOW_MS, answering the last window in between', () => {
    const w = MIN_WINDOW_MS;
    const { busy } = measureOver([
      // First window, two intervals of w / 2: another process keeps 2 cores busy in the first, none in the second.
      reading(0, 0, 0),
      reading(w / 2, w, 0),
      reading(w, w, 0),
      reading((3 * w) / 2, w, 0),
      // Second window, one interval of w: one core elsewhere.
      reading(2 * w, w, 0),
      reading(3 * w, 2 * w, 0),
    ]);
    expect(busy.start()).toBe(0); // no window yet
    busy.stop();
    expect(busy.start()).toBe(0); // half a window so far
    busy.stop();
    expect(busy.start()).toBe(1); // 2 cores for half the window's time
    busy.stop();
    expect(busy.start()).toBe(1);
  });

  it('counts nested intervals once', () => {
    const { busy, reads } = measureOver([reading(0, 0, 0), reading(MIN_WINDOW_MS, 3 * MIN_WINDOW_MS, MIN_WINDOW_MS), reading(MIN_WINDOW_MS, 0, 0)]);
    busy.start();
    busy.start();
    busy.stop();
    expect(reads()).toBe(1);
    busy.stop();
    expect(reads()).toBe(2);
    expect(busy.start()).toBe(2);
  });

  it('does not count a process that computes only between the intervals (taking turns)', () => {
    const w = MIN_WINDOW_MS;
    // Each interval of w / 2 this process keeps 2 cores busy; between them another process computes w / 2 on one core.
    const { busy } = measureOver([reading(0, 0, 0), reading(w / 2, w, w), reading(w, (3 * w) / 2, w), reading((3 * w) / 2, (5 * w) / 2, 2 * w), reading(2 * w, 0, 0)]);
    busy.start();
    busy.stop();
    busy.start();
    busy.stop();
    expect(busy.start()).toBe(0);
  });

  it("sums an interval's readings before clamping: a tick counted in the next interval offsets one missing from this", () => {
    const w = MIN_WINDOW_MS;
    // This process computes w / 2 on one core in each interval; the machine's counter ticks 10 ms late in the first.
    const { busy } = measureOver([reading(0, 0, 0), reading(w / 2, w / 2 - 10, w / 2), reading(w, w / 2 - 10, w / 2), reading((3 * w) / 2, w, w), reading(2 * w, 0, 0)]);
    busy.start();
    busy.stop();
    busy.start();
    busy.stop();
    expect(busy.start()).toBe(0);
  });

  it("reads this machine's counters, which count this process's time too", () => {
    const before = readCpu();
    const end = performance.now() + 300;
    while (performance.now() < end);
    const after = readCpu();
    const own = after.processMs - before.processMs;
    expect(own).toBeGreaterThan(50);
    // The machine's counters tick every 10 ms on each core: at most a tick a core short at each end.
    expect(after.machineBusyMs - before.machineBusyMs).toBeGreaterThanOrEqual(own - 2 * 10 * availableParallelism());
  });
});
