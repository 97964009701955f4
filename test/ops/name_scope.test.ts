/**
 * `ops.NameScope`: names for the nodes traced inside, as PopTorch's `poptorch.NameScope`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, inferenceModel, load, ops, optim, trainingModel } from 'poptfjs';
import { describeNode } from '../../lib/runtime/node_description.js';
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';
import { expectClose } from '../helpers.js';

const { NameScope } = ops;

describe('ops.NameScope', () => {
  it('names the nodes traced inside, nested scopes joined by /, and changes no number', async () => {
    const w = tf.variable(
      tf.tensor2d([
        [1, 2],
        [3, 4],
      ]),
      true,
    );
    const fn = (x: tf.Tensor) =>
      NameScope.run('encoder', () => {
        const h = NameScope.run('attention', () => tf.matMul(x, w));
        return tf.relu(tf.add(h, 1));
      });
    const outside = (x: tf.Tensor) => tf.neg(fn(x));
    const executor = inferenceModel(outside);
    const x = tf.tensor2d([
      [1, -1],
      [0, 2],
    ]);
    expectClose((await executor.run(x)) as tf.Tensor, tf.neg(tf.relu(tf.add(tf.matMul(x, w), 1))));
    const scopes = executor.executable.graph.nodes.map((n) => [n.kernel, n.annotations.scope]);
    expect(scopes).toEqual([
      ['BatchMatMul', 'encoder/attention'],
      ['Add', 'encoder'],
      ['Relu', 'encoder'],
      ['Neg', undefined],
    ]);
    expect(executor.irText()).toMatch(/= BatchMatMul\(a=%\d+, b=%\d+\) \{transposeA=false, transposeB=false\} {2}# scope encoder\/attention\n/);
    expect(executor.irText()).toMatch(/= Neg\(x=%\d+\)\n/);
  });

  it('gives backward nodes the scope of the forward node they differentiate', async () => {
    const w = tf.variable(tf.tensor2d([[0.5], [-1]]), true);
    const fn = (x: tf.Tensor, y: tf.Tensor) => {
      const out = NameScope.run('head', () => tf.sigmoid(tf.matMul(x, w)));
      return [out, ops.identityLoss(tf.sum(tf.square(tf.sub(out, y))), 'sum')];
    };
    const executor = trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0.1 }) });
    await executor.compile(tf.ones([2, 2]), tf.ones([2, 1]));
    const graph = executor.executable.graph;
    const backwardOfHead = graph.nodes.filter(
      (n) => n.annotations.pass === 'backward' && n.annotations.gradOf !== undefined && graph.nodes[n.annotations.gradOf]!.annotations.scope === 'head',
    );
    expect(backwardOfHead.length).toBeGreaterThan(0);
    expect(backwardOfHead.every((n) => n.annotations.scope === 'head')).toBe(true);
    expect(graph.nodes.filter((n) => n.kernel === 'Sub' && n.annotations.pass === 'forward').map((n) => n.annotations.scope)).toEqual([undefined]);
  });

  it('travels with the executable and names the node at the memory peak in the reports', async () => {
    // The product's [512, 256] output (512 KiB) outweighs the 64 KiB weight: the working values are the largest item.
    const w = tf.variable(tf.randomNormal([64, 256]), true);
    const fn = (x: tf.Tensor) => NameScope.run('projection', () => tf.sum(tf.matMul(x, w), 1));
    const executor = inferenceModel(fn, { options: new Options().ipuTarget({ tiles: 1, memoryPerTile: 16 * 2 ** 20 }) });
    const x = tf.ones([512, 64]);
    await executor.compile(x);
    const graph = executor.executable.graph;
    expect(graphFromMessage(graphMessage(graph), 'test').nodes.map((n) => n.annotations.scope)).toEqual(graph.nodes.map((n) => n.annotations.scope));
    expect(executor.executable.hardware.memory.ipus[0]!.peak.during).toMatch(/^projection\/BatchMatMul in /);
    expect(executor.getSummaryReport()).toMatch(/largest item\n.*activations \(working values at the peak \(projection\/BatchMatMul in /);
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-scope-')), 'scoped.poptfjs');
    await executor.compileAndExport(file, x);
    const loaded = await load(file);
    await loaded.compile(x);
    expect(loaded.executable.graph.nodes.map((n) => n.annotations.scope)).toEqual(['projection', 'projection']);
    expect(loaded.irText()).toMatch(/= BatchMatMul\(.*# scope projection\n/);
    expect(describeNode(graph.nodes[0]!)).toBe('node #0 projection/BatchMatMul');
  });

  it('opens with `using` and closes in order, also when the body throws', () => {
    {
      using _outer = new NameScope('outer');
      using _inner = new NameScope('inner');
      expect(tf.tidy(() => tf.ones([1]).shape)).toEqual([1]);
    }
    expect(() =>
      NameScope.run('failing', () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    const a = new NameScope('a');
    const b = new NameScope('b');
    expect(() => a[Symbol.dispose]()).toThrow("NameScope 'a' was closed while scope 'b' was the innermost open one; scopes close in the order opposite to their opening");
    b[Symbol.dispose]();
    a[Symbol.dispose]();
    a[Symbol.dispose]();
  });

  it('refuses names that are not non-empty strings without /', () => {
    expect(() => new NameScope(3 as unknown as string)).toThrow('NameScope: the name must be a string, got number');
    expect(() => new NameScope('')).toThrow(`NameScope: the name must be non-empty and without '/' (nested scopes are joined by '/'), got ""`);
    expect(() => new NameScope('a/b')).toThrow(`got "a/b"`);
  });
});
