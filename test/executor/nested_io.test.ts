import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { Options, OutputMode, PoptfjsError, inferenceModel, load, ops, optim, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-nested-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The inputs of {@link nestedModel}: a tensor, and an object holding a tensor and an array of two. */
type Extra = {
  scale: tf.Tensor;
  bias: [tf.Tensor, tf.Tensor];
};

/** A function model over nested inputs returning nested outputs, with a plain value among them. */
function nestedModel(w: tf.Variable) {
  return (x: tf.Tensor, extra: Extra) => {
    const h = tf.matMul(x, w);
    return { out: tf.add(tf.mul(h, extra.scale), extra.bias[0]), aux: [tf.sum(h, 1), tf.mul(extra.bias[1], 2)], tag: 'nested', none: null };
  };
}

function inputs(batch: number): [tf.Tensor, Extra] {
  return [
    tf.randomNormal([batch, 4], 0, 1, 'float32', 1),
    { scale: tf.randomUniform([batch, 1], 0.5, 1.5, 'float32', 2), bias: [tf.randomNormal([batch, 3], 0, 1, 'float32', 3), tf.randomNormal([batch, 2], 0, 1, 'float32', 4)] },
  ];
}

type NestedOutput = { out: tf.Tensor; aux: [tf.Tensor, tf.Tensor]; tag: string; none: null };

function expectSameNesting(actual: NestedOutput, expected: NestedOutput): void {
  expect(Object.keys(actual)).toEqual(['out', 'aux', 'tag', 'none']);
  expect(Array.isArray(actual.aux)).toBe(true);
  expect(actual.aux).toHaveLength(2);
  expect(actual.tag).toBe('nested');
  expect(actual.none).toBeNull();
  expectClose(actual.out, expected.out);
  expectClose(actual.aux[0], expected.aux[0]);
  expectClose(actual.aux[1], expected.aux[1]);
}

describe('nested inputs and outputs', () => {
  it("takes arrays and objects of tensors and returns the model's own structure, per leaf over device iterations", async () => {
    const w = tf.variable(tf.randomNormal([4, 3], 0, 1, 'float32', 5), true, 'nested_inference_w');
    const model = nestedModel(w);
    const executor = inferenceModel<NestedOutput>(model, { options: new Options().deviceIterations(3) });
    const [x, extra] = inputs(6);
    const expected = model(x, extra) as NestedOutput;
    expectSameNesting(await executor(x, extra), expected);
    // An object's keys may come in any order: they are taken by name.
    const reordered = { bias: extra.bias, scale: extra.scale };
    expectSameNesting(await executor(x, reordered), expected);
    expect(executor.executable.inputSignature.map((s) => s.shape)).toEqual([
      [2, 4],
      [2, 1],
      [2, 3],
      [2, 2],
    ]);
  });

  it('names the path of a call whose structure differs from the compiled one, and what was expected there', async () => {
    const w = tf.variable(tf.randomNormal([4, 3], 0, 1, 'float32', 6), true, 'nested_errors_w');
    const executor = inferenceModel(nestedModel(w));
    const [x, extra] = inputs(2);
    await executor(x, extra);
    await expect(executor(x, { scale: extra.scale })).rejects.toThrow('input 1.bias is missing; the model was compiled with an array of 2 there');
    await expect(executor(x, { ...extra, shift: x })).rejects.toThrow(
      "input 1.shift is not in the compiled model's inputs, which have an object with keys scale, bias at input 1",
    );
    await expect(executor(x, { ...extra, bias: [...extra.bias, x] })).rejects.toThrow('input 1.bias is an array of 3, but the model was compiled with an array of 2 there');
    await expect(executor(x, { ...extra, bias: [extra.bias[0], { b: extra.bias[1] }] })).rejects.toThrow(
      'input 1.bias[1] is an object with keys b, but the model was compiled with a tf.Tensor there',
    );
    await expect(executor(x, x)).rejects.toThrow('input 1 is a tf.Tensor, but the model was compiled with an object with keys scale, bias there');
    await expect(executor(x)).rejects.toThrow('expected 2 input(s) as at compile (input 0: a tf.Tensor, input 1: an object with keys scale, bias), got 1');
    await expect(executor(x, { ...extra, bias: [extra.bias[0], tf.ones([3, 2])] })).rejects.toThrow('input 1.bias[1] has shape [3,2], but the model was compiled for [2,2]');
    await expect(executor(x, { ...extra, scale: new Float32Array(2) } as unknown as Extra)).rejects.toThrow(PoptfjsError);
  });

  it('fixes plain values at compile: another value is an error', async () => {
    const executor = inferenceModel((x: tf.Tensor, options: { factor: number; name: string | null }) => tf.mul(x, options.factor));
    const x = tf.tensor1d([1, 2]);
    expect(Array.from(((await executor(x, { factor: 3, name: null })) as tf.Tensor).dataSync())).toEqual([3, 6]);
    await expect(executor(x, { factor: 4, name: null })).rejects.toThrow(
      'input 1.factor is 4, but the model was compiled with 3 there (values that are not tensors are fixed when the model is compiled)',
    );
    await expect(executor(x, { factor: 3, name: 'a' })).rejects.toThrow('input 1.name is "a", but the model was compiled with null there');
  });

  it('takes calls that leave out trailing arguments the model was compiled without, and the reverse, as JavaScript passes undefined (test_none_input_dispatch_non_default_arg_tuples)', async () => {
    // PopTorch's tests/inputs_test.py calls a model of default-valued parameters with (x,), (x, None) and (x, None, None, None).
    const model = (x: tf.Tensor, y?: tf.Tensor, z?: tf.Tensor) => tf.add(tf.add(x, y ?? 1), z ?? 10);
    const x = tf.tensor1d([1, 2]);
    const y = tf.tensor1d([5, 5]);
    const short = inferenceModel(model);
    expect(Array.from(((await short(x)) as tf.Tensor).dataSync())).toEqual([12, 13]);
    expect(Array.from(((await short(x, undefined, undefined)) as tf.Tensor).dataSync())).toEqual([12, 13]);
    const long = inferenceModel(model);
    expect(Array.from(((await long(x, y, undefined)) as tf.Tensor).dataSync())).toEqual([16, 17]);
    expect(Array.from(((await long(x, y)) as tf.Tensor).dataSync())).toEqual([16, 17]);
    // Leaving out an argument the model was compiled with a tensor for is still an error.
    await expect(long(x)).rejects.toThrow('expected 3 input(s) as at compile');
  });

  it('refuses what cannot be an input or an output, naming where', async () => {
    // @ts-expect-error a Map is no input: the error names it
    await expect(inferenceModel((x: tf.Tensor) => x).compile([tf.ones([1]), new Map()])).rejects.toThrow(
      'input 0[1] is a Map; expected a tf.Tensor, an array or plain object of them, or a number, string, boolean, null or undefined',
    );
    await expect(inferenceModel((x: tf.Tensor) => ({ y: [x, new Float32Array(1)] })).compile(tf.ones([1]))).rejects.toThrow(
      "model 'anonymous function' returned what poptfjs cannot return: output.y[1] is a typed array",
    );
    const layers = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [2] })] });
    await expect(inferenceModel(layers).compile({ x: tf.ones([1, 2]) })).rejects.toThrow('input 0 is object; expected a tf.Tensor');
  });

  it('returns a tensor returned twice at both places, and an array of one as its element', async () => {
    const executor = inferenceModel((x: tf.Tensor) => {
      const y = tf.add(x, 1);
      return [[y, { again: y, x }]];
    });
    const x = tf.tensor1d([1, 2]);
    const [y, { again, x: same }] = (await executor(x)) as unknown as [tf.Tensor, { again: tf.Tensor; x: tf.Tensor }];
    expect(Array.from(y.dataSync())).toEqual([2, 3]);
    expect(Array.from(again.dataSync())).toEqual([2, 3]);
    expect(Array.from(same.dataSync())).toEqual([1, 2]);
  });

  it('trains with the loss of ops.identityLoss inside nested outputs as plain tfjs SGD does, the output keeping its structure', async () => {
    const init = tf.randomNormal([4, 3], 0, 1, 'float32', 7);
    const w = tf.variable(init, true, 'nested_training_w');
    const model = (batch: { x: tf.Tensor; target: tf.Tensor }) => {
      const y = tf.matMul(batch.x, w);
      return { pred: { y }, loss: ops.identityLoss(tf.square(tf.sub(y, batch.target)), 'mean') };
    };
    const lr = 0.1;
    const options = new Options().deviceIterations(2).outputMode(OutputMode.All);
    const executor = trainingModel<{ pred: { y: tf.Tensor } }>(model, { options, optimizer: new optim.SGD([w], { lr }) });
    const x = tf.randomNormal([4, 4], 0, 1, 'float32', 8);
    const target = tf.randomNormal([4, 3], 0, 1, 'float32', 9);
    const [output, loss] = await executor({ target, x });
    expect(Object.keys(output)).toEqual(['pred']);
    expect(Object.keys(output.pred)).toEqual(['y']);

    // Plain tfjs: one SGD step per micro-batch of 2.
    const reference = tf.variable(init);
    const ys: tf.Tensor[] = [];
    const losses: number[] = [];
    for (const start of [0, 2]) {
      const xs = tf.slice(x, [start], [2]);
      const ts = tf.slice(target, [start], [2]);
      ys.push(tf.matMul(xs, reference));
      const { value, grads } = tf.variableGrads(() => tf.mean(tf.square(tf.sub(tf.matMul(xs, reference), ts))) as tf.Scalar, [reference]);
      losses.push(value.dataSync()[0]!);
      reference.assign(tf.sub(reference, tf.mul(grads[reference.name]!, lr)));
    }
    expectClose(output.pred.y, tf.concat(ys));
    expectClose(loss, tf.tensor1d(losses));
    executor.copyWeightsToHost();
    expectClose(w, reference);
  });

  it('trains with a loss function: targets follow the nested inputs, one per output tensor', async () => {
    const w = tf.variable(tf.randomNormal([4, 3], 0, 1, 'float32', 10), true, 'nested_loss_w');
    const model = (batch: { x: tf.Tensor }) => ({ y: tf.matMul(batch.x, w) });
    const executor = trainingModel<{ y: tf.Tensor }>(model, { loss: 'meanSquaredError', optimizer: new optim.SGD([w], { lr: 0.1 }) });
    const x = tf.randomNormal([2, 4], 0, 1, 'float32', 11);
    const target = tf.randomNormal([2, 3], 0, 1, 'float32', 12);
    const expectedLoss = tf.losses.meanSquaredError(target, tf.matMul(x, w));
    const [output, loss] = await executor({ x }, target);
    expect(Object.keys(output)).toEqual(['y']);
    expectClose(loss, expectedLoss);
  });

  it('keeps the structure in an exported executable: load() and loadExecutable() take and return it', async () => {
    const w = tf.variable(tf.randomNormal([4, 3], 0, 1, 'float32', 13), true, 'nested_export_w');
    const model = nestedModel(w);
    const options = new Options().deviceIterations(3);
    const [x, extra] = inputs(6);
    const expected = model(x, extra) as NestedOutput;
    const path = join(dir, 'nested.poptfjs');
    const exporter = inferenceModel(model, { options });
    await exporter.compileAndExport(path, x, extra);
    exporter.destroy();

    const loaded = await load(path);
    expectSameNesting((await loaded(x, extra)) as unknown as NestedOutput, expected);
    await expect(loaded(x, { scale: extra.scale })).rejects.toThrow('input 1.bias is missing');
    loaded.destroy();

    const modelOnly = join(dir, 'nested-executable.poptfjs');
    const second = inferenceModel(model, { options });
    await second.compileAndExport(modelOnly, x, extra, { exportModel: false });
    second.destroy();
    const rewrapped = inferenceModel(model, { options });
    await rewrapped.loadExecutable(modelOnly);
    expect(rewrapped.compileCount).toBe(0);
    expectSameNesting((await rewrapped(x, extra)) as unknown as NestedOutput, expected);
    rewrapped.destroy();

    const other = inferenceModel((a: tf.Tensor, e: Extra) => [tf.matMul(a, w), e.bias[1]], { options });
    await expect(other.loadExecutable(modelOnly)).rejects.toThrow(/does not match the wrapped model/);
  });

  it('gives each model its own structure when two models compile to the same graph', async () => {
    const a = tf.tensor1d([1, 2]);
    const b = tf.tensor1d([10, 20]);
    const fromObject = inferenceModel((d: { a: tf.Tensor; b: tf.Tensor }) => [tf.add(d.a, d.b), null]);
    const fromArray = inferenceModel((l: [tf.Tensor, tf.Tensor]) => ({ sum: tf.add(l[0], l[1]) }));
    const [sum, none] = (await fromObject({ a, b })) as unknown as [tf.Tensor, null];
    const { sum: same } = (await fromArray([a, b])) as unknown as { sum: tf.Tensor };
    expect(none).toBeNull();
    expect(Array.from(sum.dataSync())).toEqual([11, 22]);
    expect(Array.from(same.dataSync())).toEqual([11, 22]);
    await expect(fromArray({ a, b })).rejects.toThrow('input 0 is an object with keys a, b, but the model was compiled with an array of 2 there');
  });

  it('takes a last object as compile options only when its keys are all options and it holds no tensor', async () => {
    const seen: string[] = [];
    const byKey = inferenceModel((x: tf.Tensor, d: { progress: tf.Tensor }) => tf.add(x, d.progress));
    await byKey.compile(tf.ones([2]), { progress: tf.ones([2]) });
    expect(byKey.executable.inputSignature).toHaveLength(2);
    const withOptions = inferenceModel((x: tf.Tensor) => tf.add(x, 1));
    await withOptions.compile(tf.ones([2]), { progress: (done: number, total: number) => seen.push(`${done}/${total}`) });
    expect(withOptions.executable.inputSignature).toHaveLength(1);
    expect(seen.at(-1)).toBe('6/6');
  });
});
