import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { TraceError, irText, isRunningOnIpu, ops } from 'poptfjs';
import { traceInference, traceTraining } from '../../lib/trace/trace_model.js';
import { GraphInterpreter } from '../../lib/runtime/graph_interpreter.js';
import { RandomSource } from '../../lib/executable/random_source.js';
import { expectClose, liveTensors, variableOf } from '../helpers.js';

function mlp(): tf.Sequential {
  return tf.sequential({
    layers: [tf.layers.dense({ units: 8, inputShape: [4], activation: 'relu' }), tf.layers.dense({ units: 3, activation: 'softmax' })],
  });
}

function paramsOf(variables: ReadonlyMap<string, tf.Variable>): Map<string, tf.Tensor> {
  return new Map([...variables].map(([k, v]) => [k, v as tf.Tensor]));
}

describe('tracing a model into the IR', () => {
  it('records inputs, named parameters and kernels of a sequential model', () => {
    const model = mlp();
    const x = tf.randomNormal([2, 4]);
    const { graph, variables } = traceInference(model, [x]);
    expect(graph.inputs).toHaveLength(1);
    expect([...variables.keys()].sort()).toEqual(model.weights.map((w) => variableOf(w).name).sort());
    const params = graph.values.filter((v) => v.source.kind === 'param');
    expect(params.map((p) => p.shape)).toContainEqual([4, 8]);
    expect(graph.nodes.some((n) => n.kernel === 'Softmax')).toBe(true);
    expect(graph.nodes.every((n) => n.annotations.pass === 'forward')).toBe(true);
    expect(graph.nodes.filter((n) => n.annotations.layer === model.layers[1]!.name).length).toBeGreaterThan(0);
    const text = irText(graph);
    expect(text).toMatch(/^graph\(%0: float32\[2,4\] input0\)/);
    expect(text).toContain(`param "${variableOf(model.layers[0]!.weights[0]!).name}" trainable`);
    expect(text).toContain('Softmax(');
  });

  it('replays to the same numbers as model.predict and leaks nothing', () => {
    const model = mlp();
    const x = tf.randomNormal([5, 4]);
    const { graph, variables } = traceInference(model, [x]);
    const interpreter = new GraphInterpreter(graph);
    const expected = model.predict(x) as tf.Tensor;
    const before = liveTensors();
    for (let i = 0; i < 20; i++) {
      const out = interpreter.run({ inputs: [x], params: paramsOf(variables), random: new RandomSource(1) });
      expectClose(out.get(graph.roles.outputs[0]!)!, expected);
      tf.dispose([...out.values()]);
    }
    expect(liveTensors()).toBe(before);
    interpreter.dispose();
  });

  it('traces functional models with several inputs and outputs', () => {
    const a = tf.input({ shape: [3] });
    const b = tf.input({ shape: [2] });
    const merged = tf.layers.concatenate().apply([a, b]) as tf.SymbolicTensor;
    const h = tf.layers.dense({ units: 4, activation: 'tanh' }).apply(merged) as tf.SymbolicTensor;
    const o1 = tf.layers.dense({ units: 1 }).apply(h) as tf.SymbolicTensor;
    const o2 = tf.layers.dense({ units: 2 }).apply(h) as tf.SymbolicTensor;
    const model = tf.model({ inputs: [a, b], outputs: [o1, o2] });
    const xa = tf.randomNormal([3, 3]);
    const xb = tf.randomNormal([3, 2]);
    const { graph, variables } = traceInference(model, [xa, xb]);
    expect(graph.inputs).toHaveLength(2);
    expect(graph.roles.outputs).toHaveLength(2);
    const out = new GraphInterpreter(graph).run({ inputs: [xa, xb], params: paramsOf(variables), random: new RandomSource(0) });
    const expected = model.predict([xa, xb]) as tf.Tensor[];
    expectClose(out.get(graph.roles.outputs[0]!)!, expected[0]!);
    expectClose(out.get(graph.roles.outputs[1]!)!, expected[1]!);
  });

  it('traces a plain function of tensors, capturing variables and constants', () => {
    const w = tf.variable(
      tf.tensor2d([
        [1, 2],
        [3, 4],
      ]),
      true,
      'fn_w',
    );
    const bias = tf.tensor1d([10, 20]);
    const fn = (x: tf.Tensor) => tf.add(tf.matMul(x, w), bias);
    const x = tf.tensor2d([[1, 1]]);
    const { graph, variables } = traceInference(fn, [x]);
    expect([...variables.keys()]).toEqual(['fn_w']);
    expect(graph.values.filter((v) => v.source.kind === 'constant')).toHaveLength(1);
    const out = new GraphInterpreter(graph).run({ inputs: [tf.tensor2d([[2, 0]])], params: paramsOf(variables), random: new RandomSource(0) });
    expect(Array.from(out.get(graph.roles.outputs[0]!)!.dataSync())).toEqual([12, 24]);
  });

  it('makes isRunningOnIpu true inside the traced model only', () => {
    const seen: boolean[] = [];
    const fn = (x: tf.Tensor) => {
      seen.push(isRunningOnIpu());
      return isRunningOnIpu() ? tf.mul(x, 2) : tf.mul(x, 3);
    };
    const { graph } = traceInference(fn, [tf.ones([1])]);
    expect(seen).toEqual([true]);
    expect(isRunningOnIpu()).toBe(false);
    const out = new GraphInterpreter(graph).run({ inputs: [tf.ones([1])], params: new Map(), random: new RandomSource(0) });
    expect(out.get(graph.roles.outputs[0]!)!.dataSync()[0]).toBe(2);
  });

  it('redraws dropout masks on every run instead of replaying the traced mask', () => {
    const model = tf.sequential({ layers: [tf.layers.dropout({ rate: 0.5, inputShape: [1000] })] });
    model.compile({ optimizer: 'sgd', loss: 'meanSquaredError' });
    const x = tf.ones([1, 1000]);
    const { graph, variables } = traceTraining(model, undefined, [x, tf.ones([1, 1000])]);
    const random = graph.nodes.filter((n) => n.kernel === 'poptfjs.RandomUniform');
    expect(random).toHaveLength(1);
    expect(random[0]!.attrs).toMatchObject({ minval: 0, maxval: 1, shape: [1, 1000] });
    const interpreter = new GraphInterpreter(graph);
    const source = new RandomSource(7);
    const run = () =>
      interpreter
        .run({ inputs: [x, tf.ones([1, 1000]), tf.scalar(1)], params: paramsOf(variables), random: source })
        .get(graph.roles.outputs[0]!)!
        .dataSync();
    const first = run();
    const second = run();
    const kept = first.filter((v) => v !== 0).length;
    expect(kept).toBeGreaterThan(400);
    expect(kept).toBeLessThan(600);
    expect(first.filter((v) => v !== 0).every((v) => v === 2)).toBe(true);
    expect(Array.from(first)).not.toEqual(Array.from(second));
  });

  it('uses training=false for inference: dropout is the identity', () => {
    const model = tf.sequential({ layers: [tf.layers.dropout({ rate: 0.5, inputShape: [10] })] });
    const { graph } = traceInference(model, [tf.ones([1, 10])]);
    expect(graph.nodes.some((n) => n.kernel.startsWith('poptfjs.Random'))).toBe(false);
  });

  it('keeps seeded random ops constant, as tfjs does', () => {
    const fn = (x: tf.Tensor) => tf.add(x, tf.randomUniform([3], 0, 1, 'float32', 42));
    const { graph } = traceInference(fn, [tf.zeros([3])]);
    expect(graph.nodes.some((n) => n.kernel.startsWith('poptfjs.Random'))).toBe(false);
  });

  it('recognises randomNormal noise and redraws it with the same mean and stddev', () => {
    const fn = (x: tf.Tensor) => tf.add(x, tf.randomNormal([20000], 3, 0.5));
    const { graph } = traceInference(fn, [tf.zeros([20000])]);
    const node = graph.nodes.find((n) => n.kernel === 'poptfjs.RandomNormal')!;
    expect(node.attrs.mean).toBeCloseTo(3, 5);
    expect(node.attrs.stddev).toBeCloseTo(0.5, 5);
    const out = new GraphInterpreter(graph).run({ inputs: [tf.zeros([20000])], params: new Map(), random: new RandomSource(3) });
    const { mean, variance } = tf.moments(out.get(graph.roles.outputs[0]!)!);
    expect(mean.dataSync()[0]).toBeCloseTo(3, 1);
    expect(Math.sqrt(variance.dataSync()[0]!)).toBeCloseTo(0.5, 1);
  });

  it('reports reading tensor values inside the model, naming the kernel and layer', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [2], name: 'peeking_dense' })] });
    const original = model.layers[0]!.call.bind(model.layers[0]!);
    (model.layers[0] as unknown as { call: typeof original }).call = (inputs, kwargs) => {
      const y = original(inputs, kwargs) as tf.Tensor;
      if (y.dataSync()[0]! > 0) return tf.neg(y);
      return y;
    };
    expect(() => traceInference(model, [tf.ones([1, 2])])).toThrow(TraceError);
    expect(() => traceInference(model, [tf.ones([1, 2])])).toThrow(/reads the values of the output of kernel .* in layer 'peeking_dense'/);
  });

  it('reports reading an input directly', () => {
    const fn = (x: tf.Tensor) => (x.dataSync()[0]! > 0 ? x : tf.neg(x));
    expect(() => traceInference(fn, [tf.ones([1])])).toThrow(/reads the values of model input 'input0'/);
  });

  it('restores the engine after a failed trace', () => {
    const fn = (x: tf.Tensor) => {
      x.dataSync();
      return x;
    };
    expect(() => traceInference(fn, [tf.ones([1])])).toThrow(TraceError);
    const t = tf.add(tf.ones([2]), 1);
    expect(Array.from(t.dataSync())).toEqual([2, 2]);
    expect(Math.random()).toBeLessThan(1);
  });

  it('traces the backward pass and gives the gradients tfjs computes', () => {
    const model = mlp();
    model.compile({ optimizer: 'sgd', loss: 'categoricalCrossentropy' });
    const x = tf.randomNormal([4, 4]);
    const y = tf.oneHot(tf.tensor1d([0, 1, 2, 1], 'int32'), 3);
    const { graph, variables } = traceTraining(model, undefined, [x, y]);
    expect(graph.nodes.some((n) => n.annotations.pass === 'backward')).toBe(true);
    const vars = model.trainableWeights.map(variableOf);
    const expected = tf.variableGrads(() => tf.mean(tf.metrics.categoricalCrossentropy(y, model.apply(x, { training: true }) as tf.Tensor)) as tf.Scalar, vars);
    const out = new GraphInterpreter(graph).run({ inputs: [x, y, tf.scalar(1)], params: paramsOf(variables), random: new RandomSource(0) });
    expectClose(out.get(graph.roles.loss!)!, expected.value);
    for (const v of vars) expectClose(out.get(graph.roles.gradients![v.name]!)!, expected.grads[v.name]!, 1e-4, 1e-6);
  });

  it('scales gradients by the loss-scale input', () => {
    const model = mlp();
    const x = tf.randomNormal([2, 4]);
    const y = tf.randomUniform([2, 3]);
    const { graph, variables } = traceTraining(model, 'meanSquaredError', [x, y]);
    const interpreter = new GraphInterpreter(graph);
    const at = (scale: number) => interpreter.run({ inputs: [x, y, tf.scalar(scale)], params: paramsOf(variables), random: new RandomSource(0) });
    const one = at(1);
    const many = at(128);
    const name = variableOf(model.trainableWeights[0]!).name;
    expectClose(many.get(graph.roles.gradients![name]!)!, tf.mul(one.get(graph.roles.gradients![name]!)!, 128), 1e-5, 1e-6);
    expectClose(many.get(graph.roles.loss!)!, one.get(graph.roles.loss!)!);
  });

  it('takes the loss a model returns through identityLoss', () => {
    const w = tf.variable(tf.ones([3, 1]), true, 'identity_w');
    const fn = (x: tf.Tensor) => {
      const out = tf.matMul(x, w);
      return [out, ops.identityLoss(tf.square(out), 'sum')];
    };
    const x = tf.tensor2d([[1, 2, 3]]);
    const { graph } = traceTraining(fn, undefined, [x]);
    expect(graph.roles.outputs).toHaveLength(1);
    const out = new GraphInterpreter(graph).run({ inputs: [x, tf.scalar(1)], params: new Map([['identity_w', w as tf.Tensor]]), random: new RandomSource(0) });
    expect(out.get(graph.roles.loss!)!.dataSync()[0]).toBe(36);
    // d/dw sum((x·w)^2) = 2 (x·w) x
    expect(Array.from(out.get(graph.roles.gradients!.identity_w!)!.dataSync())).toEqual([12, 24, 36]);
  });

  it('explains a training model without a loss', () => {
    const model = mlp();
    expect(() => traceTraining(model, undefined, [tf.ones([1, 4])])).toThrow(/has no loss/);
  });

  it('records in-place variable updates (buffers) and restores the host variable', () => {
    const counter = tf.variable(tf.zeros([1]), false, 'counter_buffer');
    const fn = () => {
      counter.assign(tf.add(counter, 1));
      return tf.clone(counter);
    };
    const { graph, variables } = traceInference(fn, []);
    expect(graph.assignments.map((a) => a.param)).toEqual(['counter_buffer']);
    expect(counter.dataSync()[0]).toBe(0);
    const out = new GraphInterpreter(graph).run({ inputs: [], params: paramsOf(variables), random: new RandomSource(0) });
    expect(out.get(graph.assignments[0]!.value)!.dataSync()[0]).toBe(1);
  });
});

describe('differentiable replay', () => {
  it('lets tfjs differentiate the replayed graph with respect to inputs and parameters', () => {
    const model = mlp();
    const x = tf.randomNormal([3, 4]);
    const { graph, variables } = traceInference(model, [x]);
    const interpreter = new GraphInterpreter(graph, { differentiable: true });
    const kernel = variableOf(model.layers[0]!.weights[0]!);
    const replay = (input: tf.Tensor, k: tf.Tensor) => {
      const params = paramsOf(variables);
      params.set(kernel.name, k);
      return tf.sum(
        interpreter
          .run({ inputs: [input], params, random: new RandomSource(0) })
          .get(graph.roles.outputs[0]!)!
          .square(),
      );
    };
    const direct = (input: tf.Tensor, k: tf.Tensor) => {
      const h = tf.relu(tf.add(tf.matMul(input, k), variableOf(model.layers[0]!.weights[1]!)));
      const o = tf.softmax(tf.add(tf.matMul(h, variableOf(model.layers[1]!.weights[0]!)), variableOf(model.layers[1]!.weights[1]!)));
      return tf.sum(o.square());
    };
    const [gxReplay, gkReplay] = tf.grads(replay)([x, kernel]);
    const [gxDirect, gkDirect] = tf.grads(direct)([x, kernel]);
    expectClose(gxReplay!, gxDirect!, 1e-4, 1e-6);
    expectClose(gkReplay!, gkDirect!, 1e-4, 1e-6);
  });
});
