/**
 * `ops.MultiConv`: PopTorch's `poptorch.MultiConv`. The numbers are those of
 * the same convolutions without the scope; the simulated planner runs a
 * parallel group's convolutions at the same time on shares of the tiles, as
 * poplibs' multi-plan shares them. PopTorch's tests/multiconv_test.py
 * (test_multiconv_options_broadcast, test_multiconv_options_per_conv) set
 * cycleBackOff 0.3 and 0.4.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, half, inferenceModel, load, ops, optim, roundFloat16Array, trainingModel } from 'poptfjs';
import type { Graph, Node } from '../../lib/ir/graph.js';
import { ipuKernelTarget, kernelCost, type KernelTarget } from '../../lib/ipu/kernel_cycles.js';
import { planMatMul, TILE_SYNC_CYCLES, type MatMulShape } from '../../lib/ipu/matmul_plan.js';
import { multiConvTiles } from '../../lib/ipu/multi_conv_plan.js';
import { ampMacsPerCycle, type IpuTargetSpec } from '../../lib/ipu/target_spec.js';
import { expectClose } from '../helpers.js';

const { MultiConv, MultiConvPlanType } = ops;

const convolutions = (graph: Graph): Node[] => graph.nodes.filter((n) => /Conv/.test(n.kernel));

function filter(shape: [number, number, number, number], seed: number, name: string): tf.Variable {
  return tf.variable(tf.randomNormal(shape, 0, 0.1, 'float32', seed), true, name);
}

/** The cost-model target of one IPU of `spec`, as the compiler builds it. */
function targetOf(spec: IpuTargetSpec, overrides: Partial<KernelTarget> = {}): KernelTarget {
  return { ...ipuKernelTarget(spec, { availableMemoryProportion: 0.6, halfPartials: false }), ...overrides };
}

describe('ops.MultiConv', () => {
  it('changes no number in inference, and annotates each convolution with its group and index', async () => {
    const w1 = filter([5, 5, 1, 10], 1, 'mc_inf_w1');
    const w2 = filter([5, 5, 1, 10], 2, 'mc_inf_w2');
    const layer = tf.layers.conv2d({ filters: 10, kernelSize: 5, inputShape: [28, 28, 1], kernelInitializer: tf.initializers.glorotUniform({ seed: 3 }) });
    const convs = (x: tf.Tensor4D) => {
      const u = tf.conv2d(x, w1 as tf.Tensor4D, 1, 'valid');
      const v = tf.conv2d(tf.pow<tf.Tensor4D>(x, 2), w2 as tf.Tensor4D, 1, 'valid');
      return [u, v, layer.apply(tf.abs(x)) as tf.Tensor] as const;
    };
    const combine = ([u, v, l]: readonly tf.Tensor[]) => tf.add(tf.sub(u!, v!), l!);
    const x = tf.randomNormal([2, 28, 28, 1], 0, 1, 'float32', 4) as tf.Tensor4D;
    const reference = combine(convs(x));
    const multiConv = new MultiConv().availableMemoryProportions([0.5, 0.4, 0.3]).partialsTypes('float').planType(MultiConvPlanType.Parallel).perConvReservedTiles(100);
    const scoped = inferenceModel((t: tf.Tensor) => combine(multiConv.run(() => convs(t as tf.Tensor4D))));
    const plain = inferenceModel((t: tf.Tensor) => combine(convs(t as tf.Tensor4D)));
    const fromScoped = (await scoped.run(x)) as tf.Tensor;
    expectClose(fromScoped, reference, 1e-5, 1e-5);
    expect(Array.from(fromScoped.dataSync())).toEqual(Array.from(((await plain.run(x)) as tf.Tensor).dataSync()));

    const members = convolutions(scoped.executable.graph).map((n) => [n.kernel, n.annotations.multiConv, n.annotations.availableMemoryProportion, n.annotations.partialsType]);
    const member = (index: number) => ({ group: 0, index, planType: 'Parallel', perConvReservedTiles: 100, cycleBackOff: 0.1 });
    expect(members).toEqual([
      ['Conv2D', member(0), 0.5, 'float'],
      ['Conv2D', member(1), 0.4, 'float'],
      ['FusedConv2D', member(2), 0.3, 'float'],
    ]);
    expect(scoped.irText()).toMatch(/= Conv2D\(.*# availableMemoryProportion 0\.4, partials float, multiConv 0:1 Parallel\n/);
    // The annotations travel with the executable, and so does the time of the group.
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-multiconv-')), 'scoped.poptfjs');
    await scoped.compileAndExport(file, x);
    const loaded = await load(file);
    await loaded.compile(x);
    expect(convolutions(loaded.executable.graph).map((n) => n.annotations)).toEqual(convolutions(scoped.executable.graph).map((n) => n.annotations));
    expect(loaded.executable.hardware.timeline.duration).toBe(scoped.executable.hardware.timeline.duration);
    expect(scoped.executable.hardware.timeline.duration).toBeLessThan(plain.executable.hardware.timeline.duration);
    // Outside a model the scope groups nothing and changes nothing.
    expect(Array.from(tf.add(tf.sub(...(multiConv.run(() => convs(x)).slice(0, 2) as [tf.Tensor, tf.Tensor])), convs(x)[2]).dataSync())).toEqual(
      Array.from(reference.dataSync()),
    );
  });

  it('numbers each group of a model and each convolution in it, in tracing order, also in a `using` block', async () => {
    const w = [1, 2, 3].map((i) => filter([3, 3, 2, 2], 10 + i, `mc_groups_w${i}`));
    const serial = new MultiConv().planType(MultiConvPlanType.Serial);
    const fn = (x: tf.Tensor) => {
      const a = new MultiConv().run(() => tf.conv2d(x as tf.Tensor4D, w[0] as tf.Tensor4D, 1, 'same'));
      let b: tf.Tensor;
      let c: tf.Tensor;
      {
        using _ = serial.enter();
        b = tf.conv2d(a as tf.Tensor4D, w[1] as tf.Tensor4D, 1, 'same');
        c = tf.conv2d(a as tf.Tensor4D, w[2] as tf.Tensor4D, 1, 'same');
      }
      return tf.conv2d(tf.add(b, c) as tf.Tensor4D, w[0] as tf.Tensor4D, 1, 'same');
    };
    const executor = inferenceModel(fn);
    await executor.compile(tf.zeros([1, 4, 4, 2]));
    expect(
      convolutions(executor.executable.graph).map(
        (n) => n.annotations.multiConv && [n.annotations.multiConv.group, n.annotations.multiConv.index, n.annotations.multiConv.planType],
      ),
    ).toEqual([[0, 0, 'Parallel'], [1, 0, 'Serial'], [1, 1, 'Serial'], undefined]);
  });

  it('changes no number in a training step, and its backward convolutions join the group', async () => {
    const step = async (scoped: boolean) => {
      const w0 = filter([3, 3, 2, 4], 20, `mc_train_${scoped}_w0`);
      const w1 = filter([3, 3, 4, 3], 21, `mc_train_${scoped}_w1`);
      const w2 = filter([3, 3, 4, 3], 22, `mc_train_${scoped}_w2`);
      const convs = (h: tf.Tensor4D) => [tf.conv2d(h, w1 as tf.Tensor4D, 1, 'same'), tf.conv2d(tf.relu(h), w2 as tf.Tensor4D, 1, 'same')];
      const fn = (x: tf.Tensor) => {
        const h = tf.conv2d(x as tf.Tensor4D, w0 as tf.Tensor4D, 1, 'same');
        const [u, v] = scoped ? new MultiConv().run(() => convs(h)) : convs(h);
        return ops.identityLoss(tf.sum(tf.square(tf.sub(u!, v!))), 'sum');
      };
      const executor = trainingModel(fn, { optimizer: new optim.SGD([w0, w1, w2], { lr: 0.01 }) });
      const initial = [w0, w1, w2].map((w) => Array.from(w.dataSync()));
      await executor.run(tf.randomNormal([2, 6, 6, 2], 0, 1, 'float32', 23));
      return { executor, initial, weights: [w0, w1, w2].map((w) => Array.from(w.dataSync())) };
    };
    const plain = await step(false);
    const scoped = await step(true);
    expect(scoped.initial).toEqual(plain.initial);
    plain.weights.forEach((w, i) => expect(w).not.toEqual(plain.initial[i]));
    expect(scoped.weights).toEqual(plain.weights);

    const graph = scoped.executor.executable.graph;
    const grouped = convolutions(graph).map((n) => [
      n.kernel,
      n.annotations.multiConv?.index,
      n.annotations.gradOf !== undefined ? graph.nodes[n.annotations.gradOf]!.annotations.multiConv?.index : undefined,
    ]);
    // The first convolution is outside the group; the data and weight gradients of the two inside carry their forward's index.
    expect(grouped).toEqual(
      expect.arrayContaining([
        ['Conv2D', undefined, undefined],
        ['Conv2D', 0, undefined],
        ['Conv2D', 1, undefined],
        ['Conv2DBackpropInput', 0, 0],
        ['Conv2DBackpropFilter', 0, 0],
        ['Conv2DBackpropInput', 1, 1],
        ['Conv2DBackpropFilter', 1, 1],
        ['Conv2DBackpropFilter', undefined, undefined],
      ]),
    );
    expect(grouped.filter(([, index]) => index !== undefined)).toHaveLength(6);
    // The forward convolutions, the data gradients and the weight gradients each run as a parallel group.
    expect(scoped.executor.executable.hardware.timeline.duration).toBeLessThan(plain.executor.executable.hardware.timeline.duration);
  });

  it("runs a parallel group of two equal convolutions on the tiles poplibs' multi-plan gives them; a serial group as without the scope", async () => {
    const w1 = filter([3, 3, 64, 64], 30, 'mc_time_w1');
    const w2 = filter([3, 3, 64, 64], 31, 'mc_time_w2');
    const convs = (x: tf.Tensor) => [tf.conv2d(x as tf.Tensor4D, w1 as tf.Tensor4D, 1, 'same'), tf.conv2d(x as tf.Tensor4D, w2 as tf.Tensor4D, 1, 'same')];
    const duration = async (multiConv?: InstanceType<typeof MultiConv>) => {
      const executor = inferenceModel((x: tf.Tensor) => {
        const [u, v] = multiConv ? multiConv.run(() => convs(x)) : convs(x);
        return tf.add(u!, v!);
      });
      await executor.compile(tf.zeros([4, 32, 32, 64]));
      return { seconds: executor.executable.hardware.timeline.duration, spec: executor.executable.hardware.spec };
    };
    const plain = await duration();
    const spec = plain.spec;
    expect(spec.tiles).toBe(1472);
    // Each convolution is 4·32·32 output positions by 3·3·64 taps and channels by 64 output channels, its filter a weight.
    const shape: MatMulShape = { groups: 1, rows: 4096, depth: 576, columns: 64, leftReuse: 1 / 9, rightResident: true, precision: 'float32', partials: 'float32' };
    const cycles = (tiles: number) => {
      const plan = planMatMul(shape, { tiles, memoryPerTile: spec.memoryPerTile, availableMemoryProportion: 0.6, macsPerCycle: ampMacsPerCycle(spec) });
      return plan.cycles.total + (plan.split.depth > 1 ? 3 : 2) * TILE_SYNC_CYCLES;
    };
    for (const backOff of [0.1, 0, 0.4]) {
      const parallel = await duration(new MultiConv().cycleBackOff(backOff));
      // The second is the largest (equal FLOPs, later in the group): planned on 1472 - 50 tiles, then on the fewest tiles
      // within 1 + 1 · backOff of that time; the first takes the tiles left.
      let largest = 1;
      while (cycles(largest) > cycles(1422) * (1 + backOff)) largest++;
      const group = Math.max(cycles(largest), cycles(1472 - largest));
      expect(plain.seconds - parallel.seconds).toBeCloseTo((2 * cycles(1472) - group) / spec.clockHz, 12);
    }
    const serial = await duration(new MultiConv().planType(MultiConvPlanType.Serial));
    expect(serial.seconds).toBe(plain.seconds);
  });

  it("shares the tiles as poplibs' getParallelMultiPlan does, and plans serially when a convolution would get none", () => {
    // A convolution of F FLOPs takes ⌈1000 · F / tiles⌉ cycles.
    const cyclesOf = (flops: readonly number[]) => (c: number, tiles: number) => Math.ceil((1000 * flops[c]!) / tiles);
    // Two equal convolutions on 100 tiles, 10 reserved: the largest (the later) is fastest on 90 tiles (12 cycles), then
    // takes the fewest tiles within 1.1 × 12 = 13.2 cycles: 77 (13 cycles); the other takes the 23 left.
    expect(multiConvTiles([1, 1], cyclesOf([1, 1]), 100, 10, 0.1)).toEqual([23, 77]);
    // No back-off: within 12 cycles, 84 tiles.
    expect(multiConvTiles([1, 1], cyclesOf([1, 1]), 100, 10, 0)).toEqual([16, 84]);
    // Three convolutions of 1, 4 and 2: the largest on 80 tiles takes 50 cycles, then 67 tiles within 1.2 × 50 = 60; the
    // smallest takes the fewest of the 23 free tiles (10 still reserved) within 60 cycles: 17 (59 cycles); the
    // second largest takes the 16 left.
    expect(multiConvTiles([1, 4, 2], cyclesOf([1, 4, 2]), 100, 10, 0.1)).toEqual([17, 67, 16]);
    // Fewer tiles than 50 per convolution: poplibs reserves max(1, tiles / convolutions) = 20 each. The largest, fastest
    // on 60 - 40 = 20 tiles (250 cycles), takes 17 within 300 (295 cycles); the smallest the fewest of the 23 free within
    // 295: 4; the other the 39 left.
    expect(multiConvTiles([5, 1, 1], cyclesOf([5, 1, 1]), 60, 50, 0.1)).toEqual([17, 4, 39]);
    // Three convolutions on two tiles: no parallel plan.
    expect(multiConvTiles([1, 1, 1], cyclesOf([1, 1, 1]), 2, 50, 0.1)).toBeUndefined();
  });

  it("sets each convolution's temporary-memory proportion, which its planner fits, and a parallel group holds every share's temporaries at once", async () => {
    const SMALL = { tiles: 4, memoryPerTile: 2 ** 20 };
    const w1 = filter([3, 3, 64, 64], 40, 'mc_mem_w1');
    const w2 = filter([3, 3, 64, 64], 41, 'mc_mem_w2');
    const compiled = async (multiConv?: InstanceType<typeof MultiConv>) => {
      const convs = (x: tf.Tensor) => [tf.conv2d(x as tf.Tensor4D, w1 as tf.Tensor4D, 1, 'same'), tf.conv2d(x as tf.Tensor4D, w2 as tf.Tensor4D, 1, 'same')];
      const executor = inferenceModel(
        (x: tf.Tensor) => {
          const [u, v] = multiConv ? multiConv.run(() => convs(x)) : convs(x);
          return tf.add(u!, v!);
        },
        { options: new Options().ipuTarget(SMALL) },
      );
      await executor.compile(tf.zeros([1, 16, 16, 64]));
      return executor;
    };
    const serial = await compiled(new MultiConv().planType(MultiConvPlanType.Serial).availableMemoryProportions([0.6, 0.05]));
    const spec = serial.executable.hardware.spec;
    const graph = serial.executable.graph;
    const [first, second] = convolutions(graph);
    const shape: MatMulShape = { groups: 1, rows: 256, depth: 576, columns: 64, leftReuse: 1 / 9, rightResident: true, precision: 'float32', partials: 'float32' };
    const planned = (proportion: number, tiles = SMALL.tiles) =>
      planMatMul(shape, { tiles, memoryPerTile: SMALL.memoryPerTile, availableMemoryProportion: proportion, macsPerCycle: ampMacsPerCycle(spec) });
    const target = targetOf(spec);
    expect(kernelCost(graph, first!, target).temporaryBytes).toBe(planned(0.6).temporaryBytes);
    expect(kernelCost(graph, second!, target).temporaryBytes).toBe(planned(0.05).temporaryBytes);
    expect(planned(0.05).temporaryBytes).toBeLessThan(planned(0.6).temporaryBytes);
    expect(planned(0.05).split.serial).toBeGreaterThan(1);

    // In parallel, on two tiles each, both shares' temporaries are held at once.
    const parallel = await compiled(new MultiConv().availableMemoryProportions(0.6));
    expect(parallel.executable.hardware.memory.ipus[0]!.peak.temporary).toBe(2 * planned(0.6, 2).temporaryBytes);
  });

  it("sets each convolution's partials type: float16 running sums with 'half', as Precision.setPartialsType does, in the numbers and the planner", async () => {
    const K = 64;
    const small = [1, ...new Array<number>(K - 1).fill(2 ** -11)];
    const f1 = half(tf.variable(tf.tensor4d(small, [1, 1, K, 1]), true, 'mc_partials_f1'));
    const f2 = half(tf.variable(tf.tensor4d(small, [1, 1, K, 1]), true, 'mc_partials_f2'));
    const fn = (x: tf.Tensor) =>
      tf.concat(
        new MultiConv()
          .partialsTypes(['half', 'float'])
          .run(() => [tf.conv2d(x as tf.Tensor4D, f1 as unknown as tf.Tensor4D, 1, 'valid'), tf.conv2d(x as tf.Tensor4D, f2 as unknown as tf.Tensor4D, 1, 'valid')]),
        3,
      );
    const executor = inferenceModel(fn);
    const out = (await executor.run(half(tf.ones([1, 1, 1, K])))) as tf.Tensor;
    // In float16 each 2^-11 added to 1 is a tie that rounds back to 1; in float32 the sum is exact, then rounded.
    expect(Array.from(out.dataSync())).toEqual([1, roundFloat16Array(new Float32Array([1 + (K - 1) * 2 ** -11]))[0]]);
    // Either way the model's own partials type does not apply to them.
    const options = new Options();
    options.Precision.setPartialsType('half');
    expect(Array.from(((await inferenceModel(fn, { options }).run(half(tf.ones([1, 1, 1, K])))) as tf.Tensor).dataSync())).toEqual(Array.from(out.dataSync()));

    // The planner treats a convolution's own 'half' as it treats Precision.setPartialsType('half').
    const big = (
      await (async () => {
        const g1 = half(tf.variable(tf.randomNormal([1, 1, 256, 256], 0, 1, 'float32', 50), true, 'mc_partials_g1'));
        const g2 = half(tf.variable(tf.randomNormal([1, 1, 256, 256], 0, 1, 'float32', 51), true, 'mc_partials_g2'));
        const e = inferenceModel((x: tf.Tensor) =>
          new MultiConv()
            .partialsTypes(['half', 'float'])
            .run(() => tf.add(tf.conv2d(x as tf.Tensor4D, g1 as unknown as tf.Tensor4D, 1, 'valid'), tf.conv2d(x as tf.Tensor4D, g2 as unknown as tf.Tensor4D, 1, 'valid'))),
        );
        await e.compile(half(tf.zeros([8, 16, 16, 256])));
        return e;
      })()
    ).executable;
    const [halfConv, floatConv] = convolutions(big.graph) as [Node, Node];
    const target = (halfPartials: boolean) => targetOf(big.hardware.spec, { tiles: 16, halfPartials });
    const unannotated = (n: Node): Node => ({ ...n, annotations: { pass: n.annotations.pass } });
    expect(kernelCost(big.graph, halfConv, target(false))).toEqual(kernelCost(big.graph, unannotated(halfConv), target(true)));
    expect(kernelCost(big.graph, floatConv, target(true))).toEqual(kernelCost(big.graph, unannotated(floatConv), target(false)));
    expect(kernelCost(big.graph, halfConv, target(false))).not.toEqual(kernelCost(big.graph, floatConv, target(false)));
  });

  it("refuses PopTorch's invalid arguments, nesting and an empty scope, and the settings the simulated planner does not model", async () => {
    const mc = new MultiConv();
    expect(() => mc.partialsTypes('half16' as never)).toThrow(
      `MultiConv: Invalid partials types. Expecting 'float' or 'half' (PartialsType.Float, PartialsType.Half) or a non-empty list of them, got "half16"`,
    );
    expect(() => mc.partialsTypes([])).toThrow('MultiConv: Invalid partials types.');
    expect(() => mc.planType('parallel' as never)).toThrow('MultiConv: Invalid plan type! Expected MultiConvPlanType.Parallel or MultiConvPlanType.Serial, got "parallel"');
    for (const bad of [0, 1.5, [0.5, 2], [], '0.5']) {
      expect(() => mc.availableMemoryProportions(bad as never)).toThrow(
        `MultiConv: Invalid available memory proportion! Expected a number in (0, 1] or a non-empty list of them (one per convolution), got ${JSON.stringify(bad)}`,
      );
    }
    expect(() => mc.perConvReservedTiles(2.5)).toThrow('MultiConv: perConvReservedTiles must be a non-negative integer (tiles per convolution), got 2.5');
    expect(() => mc.perConvReservedTiles(-1)).toThrow('got -1');
    expect(() => mc.cycleBackOff(1.5)).toThrow('MultiConv: cycleBackOff must be a number between 0 and 1, got 1.5');
    expect(() => mc.cycleBackOff(-0.1)).toThrow('MultiConv: cycleBackOff must be a number between 0 and 1, got -0.1');
    expect(mc.cycleBackOff(0.3)).toBe(mc);
    expect(() => mc.enableConvDithering('yes' as never)).toThrow('MultiConv: enableConvDithering: value must be bool or list of bools, got "yes"');
    expect(mc.enableConvDithering([false, true])).toBe(mc);
    expect(mc.enableConvDithering([false, false])).toBe(mc);

    const w = filter([3, 3, 1, 1], 60, 'mc_errors_w');
    const conv = (x: tf.Tensor) => tf.conv2d(x as tf.Tensor4D, w as tf.Tensor4D, 1, 'same');
    const x = tf.zeros([1, 4, 4, 1]);
    const nested = inferenceModel((t: tf.Tensor) => new MultiConv().run(() => new MultiConv().run(() => conv(t))));
    await expect(nested.compile(x)).rejects.toThrow('MultiConv: Nested poptorch.MultiConv is not supported: close a MultiConv before opening another');
    const empty = inferenceModel((t: tf.Tensor) => new MultiConv().run(() => tf.pow(t, 2)));
    await expect(empty.compile(x)).rejects.toThrow('MultiConv: Unexpected end_multi_conv: no convolution ran inside the scope');
    const mismatched = inferenceModel((t: tf.Tensor) => new MultiConv().availableMemoryProportions([0.5, 0.5, 0.5]).run(() => tf.add(conv(t), conv(tf.abs(t)))));
    await expect(mismatched.compile(x)).rejects.toThrow(
      'MultiConv: availableMemoryProportions has 3 values but 2 convolution(s) ran inside the scope; give one value for all of them or one per convolution',
    );
    // After an error the scope is closed: a new one opens.
    expect(new MultiConv().run(() => 1)).toBe(1);
  });
});
