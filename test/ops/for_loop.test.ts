/**
 * `ops.forLoop`: PopTorch's `for_loop`, traced once into a body that the
 * device runs `count` times (tests/loop_test.py).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { inferenceModel, load, ops, optim, trainingModel } from 'poptfjs';
import { irText } from '../../lib/ir/ir_text.js';
import { nodeFlops } from '../../lib/ir/node_cost.js';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';
import { expectClose, liveTensors, smallIpuTarget } from '../helpers.js';
import { ROOT } from '../run_program.js';

const W = [
  [0.5, -0.25, 0.125, 0],
  [0.25, 0.5, -0.5, 0.125],
  [0, 0.25, 0.5, -0.25],
  [-0.125, 0, 0.25, 0.5],
];
const B = [0.1, -0.2, 0.3, -0.4];

/** A model running `count` steps of h = h·W + b in an on-device loop. */
function loopModel(count: number) {
  const w = tf.variable(tf.tensor2d(W), false);
  const b = tf.variable(tf.tensor1d(B), false);
  return (x: tf.Tensor) => ops.forLoop(count, (h) => tf.add(tf.matMul(h, w), b), [x])[0]!;
}

/** The same computation written as a plain tfjs loop. */
function plainLoop(count: number, x: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    let h = x;
    for (let i = 0; i < count; i++) h = tf.add(tf.matMul(h, tf.tensor2d(W)), tf.tensor1d(B));
    return h;
  });
}

const X = () =>
  tf.tensor2d([
    [1, 2, 3, 4],
    [-1, 0.5, 2, -3],
  ]);

describe('ops.forLoop', () => {
  it('runs N matmul+add steps on the device as a plain tfjs loop does', async () => {
    const executor = inferenceModel(loopModel(7));
    expectClose((await executor.run(X())) as tf.Tensor, plainLoop(7, X()));
    const other = X().mul(2);
    expectClose((await executor.run(other)) as tf.Tensor, plainLoop(7, other));
  });

  it('puts one loop node holding the body in the IR, the same size whatever the count', async () => {
    const compiled = async (count: number) => {
      const executor = inferenceModel(loopModel(count));
      await executor.compile(X());
      return executor;
    };
    const three = await compiled(3);
    const thirty = await compiled(30);
    const graph = thirty.executable.graph;
    expect(graph.nodes.map((n) => n.kernel)).toEqual(['poptfjs.ForLoop']);
    expect(graph.nodes[0]!.attrs).toEqual({ count: 30 });
    expect(graph.nodes[0]!.bodies!.map((body) => body.nodes.map((n) => n.kernel))).toEqual([['BatchMatMul', 'Add']]);
    expect(three.executable.graph.nodes.length).toBe(1);
    expect(irText(three.executable.graph).split('\n').length).toBe(irText(graph).split('\n').length);
    expect(thirty.irText()).toMatch(
      /= poptfjs\.ForLoop\(%0, %\d+, %\d+\) \{count=30\}\n {4}body\(%0: float32\[2,4\] input0, %\d+: float32\[4,4\] captured0, %\d+: float32\[4\] captured1\)\n {6}%\d+: float32\[2,4\] = BatchMatMul\(/,
    );
  });

  it('carries several values, as PopTorch test_loop_multiple_inputs', async () => {
    const fn = (x: tf.Tensor, y: tf.Tensor, z: tf.Tensor, w: tf.Tensor) =>
      ops.forLoop(10, (a, b, c, d) => [tf.mul(a!, b!), tf.add(b!, c!), tf.mul(a!, d!), tf.add(d!, 1)], [x, y, z, w]);
    const executor = inferenceModel(fn);
    const outs = (await executor.run(tf.tensor1d([0.1]), tf.tensor1d([0.2]), tf.tensor1d([0.3]), tf.tensor1d([0.4]))) as tf.Tensor[];
    let [x, y, z, w] = [0.1, 0.2, 0.3, 0.4];
    for (let i = 0; i < 10; i++) [x, y, z, w] = [x * y, y + z, x * w, w + 1];
    outs.forEach((t, i) => expectClose(t, tf.tensor1d([[x, y, z, w][i]!])));
  });

  it('loops over constants only without folding them away, and over a layer of the model (its weights read by the body)', async () => {
    const dense = tf.layers.dense({ units: 4, inputShape: [4], kernelInitializer: 'glorotUniform' });
    const fn = (x: tf.Tensor) => {
      const [t1, t2] = ops.forLoop(
        5,
        (a, b) => {
          const a2 = tf.mul(a!, 2);
          return [a2, tf.mul(b!, a2)];
        },
        [tf.tensor1d([1, 2]), tf.tensor1d([3, 4])],
      );
      const layered = ops.forLoop(2, (h) => dense.apply(h) as tf.Tensor, [x])[0]!;
      return [t1!, t2!, layered];
    };
    const x = tf.tensor2d([[1, 0, -1, 2]]);
    const [t1, t2, layered] = (await inferenceModel(fn).run(x)) as tf.Tensor[];
    expectClose(t1!, tf.tensor1d([32, 64]));
    expectClose(t2!, tf.tensor1d([3 * 2 * 4 * 8 * 16 * 32, 4 * 4 * 8 * 16 * 32 * 64]));
    expectClose(layered!, dense.apply(dense.apply(x)) as tf.Tensor);
  });

  it('runs with tfjs outside a compiled model, leaving only its outputs', () => {
    const fn = loopModel(4);
    const x = X();
    const before = liveTensors();
    const out = fn(x);
    expect(liveTensors()).toBe(before + 1);
    expectClose(out, plainLoop(4, x));
    const zero = ops.forLoop(0, (h) => tf.neg(h), [x])[0]!;
    expect(zero).not.toBe(x);
    expectClose(zero, x);
  });

  it('refuses at compile a loop of more iterations than the simulator computes in hours, nested loops multiplied, with the figures', async () => {
    const x = tf.zeros([2]);
    const advice = 'the simulated IPU computes every iteration on the host, which would take hours';
    for (const count of [1e9, 2 ** 31, 2 ** 53 - 1]) {
      const started = Date.now();
      await expect(inferenceModel((v: tf.Tensor) => ops.forLoop(count, (h) => tf.add(h, 1), [v])[0]!).compile(x)).rejects.toThrow(
        `ops.forLoop: a loop of ${count} iterations is more than the 16777216 iterations a model may run: ${advice}`,
      );
      expect(Date.now() - started).toBeLessThan(10_000);
    }
    const nested = (v: tf.Tensor) => ops.forLoop(4096, (h) => ops.forLoop(8192, (g) => tf.add(g, 1), [h])[0]!, [v])[0]!;
    await expect(inferenceModel(nested).compile(x)).rejects.toThrow(
      `ops.forLoop: a loop of 33554432 iterations (8192 in each of the 4096 iterations of the loops around it) is more than the 16777216 iterations a model may run`,
    );
    // Within the bound, nested loops run.
    const within = (v: tf.Tensor) => ops.forLoop(3, (h) => ops.forLoop(5, (g) => tf.add(g, 1), [h])[0]!, [v])[0]!;
    expectClose((await inferenceModel(within).run(x)) as tf.Tensor, tf.fill([2], 15));
  });

  it('runs a long loop that SIGINT interrupts at once', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/ops/programs/long_loop.ts'], { cwd: ROOT, timeout: 120_000, killSignal: 'SIGKILL' });
    let stdout = '';
    const running = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        if (stdout.includes('running')) resolve();
      }),
    );
    const ended = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_, signal) => resolve(signal)));
    await running;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const interrupted = Date.now();
    child.kill('SIGINT');
    expect(await ended).toBe('SIGINT');
    expect(Date.now() - interrupted).toBeLessThan(10_000);
    expect(stdout).not.toContain('finished');
  }, 180_000);

  it('returns its inputs for a count of 0', async () => {
    const out = (await inferenceModel((x: tf.Tensor) => ops.forLoop(0, (h) => tf.neg(h), [x])[0]!).run(X())) as tf.Tensor;
    expectClose(out, X());
  });

  it('keeps its body through export and load', async () => {
    const executor = inferenceModel(loopModel(5));
    await executor.compile(X());
    const graph = executor.executable.graph;
    expect(irText(graphFromMessage(graphMessage(graph), 'test'))).toBe(irText(graph));
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-loop-')), 'loop.poptfjs');
    await executor.compileAndExport(file, X());
    const loaded = await load(file);
    expectClose((await loaded.run(X())) as tf.Tensor, plainLoop(5, X()));
    expect(loaded.executable.graph.nodes[0]!.bodies![0]!.nodes.map((n) => n.kernel)).toEqual(['BatchMatMul', 'Add']);
  });

  it('costs the body count times and takes its memory once', async () => {
    const graphOf = async (count: number) => {
      const executor = inferenceModel(loopModel(count));
      await executor.compile(X());
      return executor.executable;
    };
    const once = await graphOf(1);
    const ten = await graphOf(10);
    const target = smallIpuTarget({ tiles: 8 });
    const cost = (e: typeof once) => kernelCost(e.graph, e.graph.nodes[0]!, target);
    const body = once.graph.nodes[0]!.bodies![0]!;
    const bodyCost = body.nodes.map((n) => kernelCost(body, n, target));
    // One iteration: the body's two kernels, then a copy of the carried [2,4] float32 (32 bytes over 8 tiles, 8 bytes a cycle) after a vertex's 170 cycles, and a sync.
    expect(cost(once).compute).toBeCloseTo(bodyCost[0]!.compute + bodyCost[1]!.compute + 170 + 32 / 8 / 8, 6);
    expect(cost(once).sync).toBe(bodyCost[0]!.sync + bodyCost[1]!.sync + 90);
    expect(cost(ten).compute).toBeCloseTo(10 * cost(once).compute, 6);
    expect(cost(ten).exchange).toBeCloseTo(10 * cost(once).exchange, 6);
    expect(cost(ten).sync).toBe(10 * cost(once).sync);
    // Memory once: the copies of the body's inputs (h: 32 bytes, W: 64, b: 16) for the whole run, the product (32) from the
    // matmul (with its temporary memory) to the Add, and the sum (32).
    const inputs = 32 + 64 + 16;
    const working = Math.max(inputs + 32 + bodyCost[0]!.temporaryBytes, inputs + 32 + 32);
    expect(bodyCost[0]!.temporaryBytes).toBeGreaterThan(0);
    expect(cost(once).temporaryBytes).toBe(working);
    expect(cost(ten).temporaryBytes).toBe(working);
    expect(ten.hardware.memory.ipus[0]!.byKind.temporary).toBe(once.hardware.memory.ipus[0]!.byKind.temporary);
    // FLOPs: 2·4 per output of the product and one per output of the sum, 8 outputs, ten times.
    expect(nodeFlops(ten.graph, ten.graph.nodes[0]!)).toBe(10 * (2 * 4 * 8 + 8));
  });

  it('refuses bodies whose outputs do not match their inputs', async () => {
    const x = X();
    const wrongShape = (v: tf.Tensor) => ops.forLoop(3, (h) => tf.sum(h, 1), [v])[0]!;
    const message =
      "ops.forLoop: the body's output 0 is float32[2] but its input 0 is float32[2,4]; each iteration's outputs are the next one's inputs, so they must have the same shapes and dtypes";
    expect(() => wrongShape(x)).toThrow(message);
    await expect(inferenceModel(wrongShape).run(x)).rejects.toThrow(message);
    await expect(inferenceModel((v: tf.Tensor) => ops.forLoop(3, (h) => tf.cast(h, 'int32'), [v])[0]!).run(x)).rejects.toThrow(
      "ops.forLoop: the body's output 0 is int32[2,4] but its input 0 is float32[2,4]",
    );
    await expect(inferenceModel((v: tf.Tensor) => ops.forLoop(3, (h) => [h, h], [v])[0]!).run(x)).rejects.toThrow(
      "ops.forLoop: the body returns 2 tensor(s) for 1 input(s); it must return one tensor per input, as each iteration's outputs are the next one's inputs",
    );
  });

  it('refuses what is not a list of tensors, as PopTorch does', () => {
    const x = X();
    expect(() => ops.forLoop(2, (h) => h, x as unknown as tf.Tensor[])).toThrow('ops.forLoop expects input tensors (inputs) to be a list of tensors. (Object is not list)');
    expect(() => ops.forLoop(2, (h) => h, [x, 5 as unknown as tf.Tensor])).toThrow(
      'ops.forLoop expects input tensors (inputs) to be a list of tensors. (Object contained in list at index 1 is not tf.Tensor)',
    );
    expect(() => ops.forLoop(2.5, (h) => h, [x])).toThrow('ops.forLoop: count must be a non-negative integer, got 2.5');
    expect(() => ops.forLoop(2, 'body' as unknown as (h: tf.Tensor) => tf.Tensor, [x])).toThrow('ops.forLoop: body must be a function, got string');
  });

  it('refuses a body that reads values while it is traced, or a tensor of the body used after the loop', async () => {
    const reading = (x: tf.Tensor) => ops.forLoop(10, (h) => (h.dataSync()[0]! > 0 ? tf.neg(h) : h), [x])[0]!;
    await expect(inferenceModel(reading).run(X())).rejects.toThrow(
      'the body of ops.forLoop reads the values of input 0 of the body of ops.forLoop while it is being traced. ' +
        'The body is traced once into a subgraph that the device runs 10 times, so values cannot be read inside it and control flow cannot depend on them',
    );
    const readingInput = (x: tf.Tensor, y: tf.Tensor) => ops.forLoop(2, (h) => (y.dataSync()[0]! > 0 ? tf.neg(h) : h), [x])[0]!;
    await expect(inferenceModel(readingInput).run(X(), tf.scalar(1))).rejects.toThrow("the body of ops.forLoop reads the values of model input 'input1'");
    const escaping = (x: tf.Tensor) => {
      let inside: tf.Tensor | undefined;
      const out = ops.forLoop(
        2,
        (h) => {
          inside = tf.relu(h);
          return tf.neg(h);
        },
        [x],
      )[0]!;
      return tf.add(out, inside!);
    };
    await expect(inferenceModel(escaping).run(X())).rejects.toThrow(
      "a tensor computed inside the body of ops.forLoop is used outside it: a body is traced once into a subgraph whose values exist only while it runs; return the tensor from the body and use the op's output instead",
    );
  });

  it("refuses a body that assigns a weight, leaving the weight's value as it was", async () => {
    const w = tf.variable(tf.tensor2d(W), false, 'loop_counter_w');
    const assigning = (x: tf.Tensor) =>
      ops.forLoop(
        3,
        (h) => {
          w.assign(tf.add(w, 1));
          return tf.matMul(h, w);
        },
        [x],
      )[0]!;
    await expect(inferenceModel(assigning).run(X())).rejects.toThrow(
      "the body of ops.forLoop assigns weight 'loop_counter_w': a body runs on the device as a subgraph that cannot write the model's weights; return the new value from the body instead",
    );
    expectClose(w, tf.tensor2d(W));
  });

  it('is for inference only, as in PopTorch', async () => {
    const w = tf.variable(tf.tensor2d(W), true);
    const fn = (x: tf.Tensor) => {
      const out = ops.forLoop(2, (h) => tf.matMul(h, w), [x])[0]!;
      return [out, ops.identityLoss(out, 'sum')];
    };
    await expect(trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0.1 }) }).run(X())).rejects.toThrow('ops.forLoop() is only supported in inference.');
  });
});
