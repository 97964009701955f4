/**
 * `ops.Attribute`: attributes on the nodes traced inside, as PopTorch's
 * `poptorch.Attribute`. Written from PopTorch's tests/misc_test.py
 * (test_outline_attribute): the first normalisation of a model, traced in
 * `Attribute(__outline={"layer": "embedding"})`, carries the attribute; the
 * second, outside it, does not.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';
import { expectClose } from '../helpers.js';

const { Attribute } = ops;

/** A layer normalisation over the last axis, as a function of tensors. */
function norm(x: tf.Tensor, gain: tf.Tensor): tf.Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5))), gain);
}

describe('ops.Attribute', () => {
  it('sets its attributes on the nodes traced inside only, changing no number (test_outline_attribute)', async () => {
    const g1 = tf.variable(tf.tensor1d([1, 2, 3, 4, 5, 6, 7, 8]), true, 'gn1');
    const g2 = tf.variable(tf.tensor1d([0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4]), true, 'gn2');
    const model = (x: tf.Tensor) => {
      const h = Attribute.run({ __outline: { layer: 'embedding' } }, () => norm(x, g1));
      return norm(h, g2);
    };
    const x = tf.randomNormal([3, 8], 0, 1, 'float32', 4);
    const executor = inferenceModel(model);
    expectClose((await executor.run(x)) as tf.Tensor, model(x), 1e-6, 1e-6);
    const graph = executor.executable.graph;
    const gainOf = (name: string) => graph.values.find((v) => v.source.kind === 'param' && v.source.name === name)!.id;
    const multiplies = graph.nodes.filter((n) => n.kernel === 'Multiply' && n.inputs.some((i) => i === gainOf('gn1') || i === gainOf('gn2')));
    expect(multiplies.map((n) => [n.inputs.includes(gainOf('gn1')) ? 'gn1' : 'gn2', n.annotations.attributes])).toEqual([
      ['gn1', { __outline: { layer: 'embedding' } }],
      ['gn2', undefined],
    ]);
    const inside = graph.nodes.filter((n) => n.annotations.attributes !== undefined).length;
    expect(inside).toBe(graph.nodes.length / 2);
    expect(executor.irText()).toMatch(/= Multiply\(a=%\d+, b=%\d+\) {2}# attributes __outline\{layer: embedding\}\n/);
    // The attributes travel with the executable.
    expect(graphFromMessage(graphMessage(graph), 'test').nodes.map((n) => n.annotations.attributes)).toEqual(graph.nodes.map((n) => n.annotations.attributes));
    executor.destroy();
  });

  it('nests, an inner value of a key replacing the outer one until it closes; backward nodes carry the attributes of their forward node', async () => {
    const w = tf.variable(tf.tensor2d([[0.5], [-1]]), true);
    const fn = (x: tf.Tensor, y: tf.Tensor) => {
      using _outer = new Attribute({ __outline: { layer: 'head', kind: 'dense' } });
      const z = Attribute.run({ __outline: { layer: 'inner' }, other: { a: 'b' } }, () => tf.matMul(x, w));
      const out = tf.sigmoid(z);
      return [out, ops.identityLoss(tf.sum(tf.square(tf.sub(out, y))), 'sum')];
    };
    const executor = trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0.1 }) });
    await executor.compile(tf.ones([2, 2]), tf.ones([2, 1]));
    const graph = executor.executable.graph;
    const forward = (kernel: string) => graph.nodes.find((n) => n.kernel === kernel && n.annotations.pass === 'forward')!;
    expect(forward('BatchMatMul').annotations.attributes).toEqual({ __outline: { layer: 'inner', kind: 'dense' }, other: { a: 'b' } });
    expect(forward('Sigmoid').annotations.attributes).toEqual({ __outline: { layer: 'head', kind: 'dense' } });
    const backward = graph.nodes.filter((n) => n.annotations.pass === 'backward' && n.annotations.gradOf === forward('BatchMatMul').id);
    expect(backward.length).toBeGreaterThan(0);
    for (const node of backward) expect(node.annotations.attributes).toEqual(forward('BatchMatMul').annotations.attributes);
    expect(executor.irText()).toContain('# attributes __outline{layer: inner, kind: dense} other{a: b}');
    executor.destroy();
  });

  it('refuses attributes that are not objects of string values, and scopes closed out of order', () => {
    expect(() => new Attribute({ __outline: 'embedding' } as never)).toThrow('Attribute: attribute \'__outline\' must be an object of key: string value, got "embedding"');
    expect(() => new Attribute({ __outline: { layer: 3 } } as never)).toThrow("Attribute: __outline.layer must be a string, as PopTorch's attribute values are, got 3");
    expect(() => new Attribute(null as never)).toThrow(/^Attribute: expected an object of attribute: \{ key: value \}/);
    const outer = new Attribute({ a: { k: 'v' } });
    const inner = new Attribute({ b: { k: 'v' } });
    expect(() => outer[Symbol.dispose]()).toThrow(/^Attribute: a scope was closed while another one was the innermost open one/);
    inner[Symbol.dispose]();
    outer[Symbol.dispose]();
  });
});
