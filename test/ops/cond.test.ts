/**
 * `ops.cond`: PopTorch's `cond`, both branches traced once and the one the
 * condition picks run on the device (tests/if_test.py).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { inferenceModel, load, ops, optim, trainingModel } from 'poptfjs';
import { kernelCost, kernelCycles } from '../../lib/ipu/kernel_cycles.js';
import { bodyWorkingBytes } from '../../lib/ipu/body_memory.js';
import { expectClose, smallIpuTarget } from '../helpers.js';

const W = [
  [0.5, -1],
  [2, 0.25],
];

/** then: x·W + y; else: x * y. */
function branchModel() {
  const w = tf.variable(tf.tensor2d(W), false);
  return (condition: tf.Tensor, x: tf.Tensor, y: tf.Tensor) =>
    ops.cond(
      condition,
      (a, b) => tf.add(tf.matMul(a!, w), b!),
      [x, y],
      (a, b) => tf.mul(a!, b!),
      [x, y],
    )[0]!;
}

const X = () =>
  tf.tensor2d([
    [1, 2],
    [3, -4],
  ]);
const Y = () =>
  tf.tensor2d([
    [0.5, -1],
    [2, 3],
  ]);
const TRUE = () => tf.tensor1d([true], 'bool');
const FALSE = () => tf.tensor1d([false], 'bool');

describe('ops.cond', () => {
  it('runs the branch the condition tensor picks, each time the model runs, as plain tfjs computes it', async () => {
    const executor = inferenceModel(branchModel());
    expectClose((await executor.run(TRUE(), X(), Y())) as tf.Tensor, tf.add(tf.matMul(X(), tf.tensor2d(W)), Y()));
    expectClose((await executor.run(FALSE(), X(), Y())) as tf.Tensor, tf.mul(X(), Y()));
    // A condition of shape [] works too.
    const scalar = inferenceModel(branchModel());
    expectClose((await scalar.run(tf.scalar(false, 'bool'), X(), Y())) as tf.Tensor, tf.mul(X(), Y()));
    expectClose((await scalar.run(tf.scalar(true, 'bool'), X(), Y())) as tf.Tensor, tf.add(tf.matMul(X(), tf.tensor2d(W)), Y()));
    // Outside a compiled model the condition is read and the branch runs with tfjs.
    expectClose(branchModel()(FALSE(), X(), Y()), tf.mul(X(), Y()));
  });

  it('is one node holding both branches in the IR', async () => {
    const executor = inferenceModel(branchModel());
    await executor.compile(TRUE(), X(), Y());
    const graph = executor.executable.graph;
    expect(graph.nodes.map((n) => n.kernel)).toEqual(['poptfjs.Cond']);
    expect(graph.nodes[0]!.bodies!.map((b) => b.nodes.map((n) => n.kernel))).toEqual([['BatchMatMul', 'Add'], ['Multiply']]);
    expect(executor.irText()).toMatch(/= poptfjs\.Cond\(%0, %1, %2, %\d+, %1, %2\)\n {4}then\(.*\n(.*\n){3} {4}else\(/);
  });

  it('takes branches of different inputs, none, outer tensors read implicitly and several outputs, as PopTorch test_multi_outs', async () => {
    const fn = (condition: tf.Tensor, x: tf.Tensor, y: tf.Tensor) => [
      ...ops.cond(
        condition,
        (a) => [a!, tf.add(x, y), y],
        [x],
        (b) => [tf.mul(b!, y), y, tf.sub(x, y)],
        [y],
      ),
      ...ops.cond(
        condition,
        () => tf.mul(x, y),
        [],
        (a) => a!,
        [x],
      ),
    ];
    const executor = inferenceModel(fn);
    const x = tf.tensor1d([0.25]);
    const y = tf.tensor1d([0.75]);
    const expected = (c: boolean) => (c ? [x, x.add(y), y, x.mul(y)] : [y.mul(y), y, x.sub(y), x]);
    for (const c of [true, false]) {
      const outs = (await executor.run(tf.tensor1d([c], 'bool'), x, y)) as tf.Tensor[];
      outs.forEach((t, i) => expectClose(t, expected(c)[i]!));
    }
  });

  it('nests, as PopTorch test_nested_cond', async () => {
    const fn = (condition: tf.Tensor, nested: tf.Tensor, x: tf.Tensor, y: tf.Tensor) => {
      const thenBody = () =>
        ops.cond(
          nested,
          (a, b) => tf.add(a!, b!),
          [x, y],
          () => tf.sub(x, y),
          [],
        )[0]!;
      const elseBody = (n: tf.Tensor) =>
        ops.cond(
          tf.logicalNot(n),
          (b) => tf.mul(x, b!),
          [y],
          () => tf.mul(x, 2),
          [],
        )[0]!;
      const first = ops.cond(condition, thenBody, [], elseBody, [nested])[0]!;
      const second = ops.cond(condition, thenBody, [], elseBody, [nested])[0]!;
      return tf.add(first, second);
    };
    const executor = inferenceModel(fn);
    const x = tf.tensor1d([0.5]);
    const y = tf.tensor1d([0.25]);
    const run = async (c: boolean, n: boolean) => (await executor.run(tf.tensor1d([c], 'bool'), tf.tensor1d([n], 'bool'), x, y)) as tf.Tensor;
    expectClose(await run(true, true), tf.tensor1d([2 * (0.5 + 0.25)]));
    expectClose(await run(false, true), tf.tensor1d([2 * 0.5 * 2]));
    expectClose(await run(true, false), tf.tensor1d([2 * (0.5 - 0.25)]));
    expectClose(await run(false, false), tf.tensor1d([2 * 0.5 * 0.25]));
  });

  it('keeps both branches through export and load', async () => {
    const executor = inferenceModel(branchModel());
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-cond-')), 'cond.poptfjs');
    await executor.compileAndExport(file, TRUE(), X(), Y());
    const loaded = await load(file);
    expectClose((await loaded.run(TRUE(), X(), Y())) as tf.Tensor, tf.add(tf.matMul(X(), tf.tensor2d(W)), Y()));
    expectClose((await loaded.run(FALSE(), X(), Y())) as tf.Tensor, tf.mul(X(), Y()));
  });

  it("costs the longer branch and a sync, and takes the larger branch's memory", async () => {
    const executor = inferenceModel(branchModel());
    await executor.compile(TRUE(), X(), Y());
    const graph = executor.executable.graph;
    const node = graph.nodes[0]!;
    const target = smallIpuTarget({ tiles: 8 });
    const [thenBody, elseBody] = node.bodies!;
    const costs = [thenBody!, elseBody!].map((body) => body.nodes.map((n) => kernelCost(body, n, target)));
    const cycles = costs.map((list) => list.reduce((n, c) => n + kernelCycles(c), 0));
    expect(cycles[0]!).toBeGreaterThan(cycles[1]!);
    const cost = kernelCost(graph, node, target);
    expect(kernelCycles(cost)).toBeCloseTo(cycles[0]! + 90, 6);
    const working = [thenBody!, elseBody!].map((body, i) => bodyWorkingBytes(body, (n) => costs[i]![n.id]!.temporaryBytes));
    // The then branch holds its inputs x, y (16 bytes each) and the captured W (16), the product and the sum (16 each);
    // the else branch its inputs and the product.
    expect(working[1]).toBe(3 * 16);
    expect(working[0]).toBe(Math.max(3 * 16 + 16 + costs[0]![0]!.temporaryBytes, 3 * 16 + 2 * 16));
    expect(cost.temporaryBytes).toBe(Math.max(...working));
  });

  it('refuses a condition that is not a scalar boolean tensor', async () => {
    const message = 'ops.cond: the condition must be a scalar boolean tensor (one element, of shape [] or [1]), got ';
    await expect(inferenceModel(branchModel()).run(tf.tensor1d([true, false], 'bool'), X(), Y())).rejects.toThrow(`${message}bool[2]`);
    await expect(inferenceModel(branchModel()).run(tf.tensor1d([1]), X(), Y())).rejects.toThrow(`${message}float32[1]`);
    expect(() =>
      ops.cond(
        true as unknown as tf.Tensor,
        (a) => a!,
        [X()],
        (a) => a!,
        [X()],
      ),
    ).toThrow(`${message}boolean`);
  });

  it('refuses branches whose outputs differ, and inputs that are not lists, as PopTorch does', async () => {
    const shapes = (c: tf.Tensor, x: tf.Tensor) =>
      ops.cond(
        c,
        (a) => tf.sum(a!, 0),
        [x],
        (a) => a!,
        [x],
      )[0]!;
    await expect(inferenceModel(shapes).run(TRUE(), X())).rejects.toThrow(
      'ops.cond: output 0 is float32[2] in the then body but float32[2,2] in the else body; both branches must return tensors of the same shapes and dtypes',
    );
    const counts = (c: tf.Tensor, x: tf.Tensor) =>
      ops.cond(
        c,
        (a) => [a!, a!],
        [x],
        (a) => a!,
        [x],
      )[0]!;
    await expect(inferenceModel(counts).run(TRUE(), X())).rejects.toThrow(
      'ops.cond: the then body returns 2 tensor(s) and the else body 1; both must return the same number of tensors',
    );
    expect(() =>
      ops.cond(
        TRUE(),
        (a) => a!,
        X() as unknown as tf.Tensor[],
        (a) => a!,
        [X()],
      ),
    ).toThrow('ops.cond expects thenInputs and elseInputs tensors to be a list of tensors. (Object is not list)');
  });

  it('refuses a branch that reads values while it is traced', async () => {
    const reading = (c: tf.Tensor, x: tf.Tensor) =>
      ops.cond(
        c,
        (a) => (a!.dataSync()[0]! > 0 ? a! : tf.neg(a!)),
        [x],
        (a) => a!,
        [x],
      )[0]!;
    await expect(inferenceModel(reading).run(TRUE(), X())).rejects.toThrow(
      'the then body of ops.cond reads the values of input 0 of the then body of ops.cond while it is being traced. ' +
        'The body is traced once into a subgraph that the device runs only when the condition is true',
    );
  });

  it('is for inference only, as in PopTorch', async () => {
    const w = tf.variable(tf.tensor2d(W), true);
    const fn = (c: tf.Tensor, x: tf.Tensor) => {
      const body = (a: tf.Tensor) => tf.matMul(a, w);
      const out = ops.cond(c, body, [x], body, [x])[0]!;
      return [out, ops.identityLoss(out, 'sum')];
    };
    await expect(trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0.1 }) }).run(TRUE(), X())).rejects.toThrow('ops.cond() is only supported in inference.');
  });
});
