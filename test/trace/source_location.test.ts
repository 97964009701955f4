/**
 * Source locations: the file and line of the model code that made each op,
 * in the compiled graph (kept in the executable file) and in the profile
 * report's layer table, as PopTorch records the source location of each op.
 * They do not change what is compiled: the executable cache ignores them.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, half, inferenceModel, ops, optim, trainingModel } from 'poptfjs';

const { NameScope } = ops;
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';
import { executableCacheStatistics } from '../../lib/files/executable_cache.js';

const FILE = 'test/trace/source_location.test.ts';

/** The line of the caller. */
function lineHere(): number {
  return Number(new Error().stack!.split('\n')[2]!.match(/:(\d+):\d+\)?$/)![1]);
}

describe('source locations', () => {
  it("give each node of a function model the line that made it; backward nodes their forward node's; ops and half are looked through", async () => {
    const w = tf.variable(tf.tensor2d([[0.5], [-1]]), true, 'src_w');
    const lines: number[] = [];
    const model = (x: tf.Tensor) => {
      lines.push(lineHere() + 1);
      const h = tf.matMul(x, w);
      lines.push(lineHere() + 1);
      const s = tf.sigmoid(half(h));
      return ops.identityLoss(tf.sum(s), 'sum');
    };
    const executor = trainingModel(model, { optimizer: new optim.SGD([w], { lr: 0.1 }) });
    await executor.compile(tf.ones([2, 2]));
    const graph = executor.executable.graph;
    const forward = (kernel: string) => graph.nodes.find((n) => n.kernel === kernel && n.annotations.pass === 'forward')!;
    expect(forward('BatchMatMul').annotations.source).toMatch(new RegExp(`^${FILE}:${lines[0]}:\\d+$`));
    expect(forward('poptfjs.Float16Cast').annotations.source).toMatch(new RegExp(`^${FILE}:${lines[1]}:\\d+$`));
    expect(forward('Sigmoid').annotations.source).toMatch(new RegExp(`^${FILE}:${lines[1]}:\\d+$`));
    const backward = graph.nodes.filter((n) => n.annotations.gradOf === forward('BatchMatMul').id);
    expect(backward.length).toBeGreaterThan(0);
    for (const node of backward) expect(node.annotations.source).toBe(forward('BatchMatMul').annotations.source);
    expect(graphFromMessage(graphMessage(graph), 'test').nodes.map((n) => n.annotations.source)).toEqual(graph.nodes.map((n) => n.annotations.source));
    executor.destroy();
  });

  it('leave the kernels of a layers model, made by tfjs, and of a loss poptfjs computes without one', async () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3] })] });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
    await executor.compile(tf.ones([2, 3]), tf.ones([2, 2]));
    expect(executor.executable.graph.nodes.filter((n) => n.annotations.source !== undefined)).toEqual([]);
    executor.destroy();
  });

  it("show in the profile report's layer table, and leave the executable cache's key alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-source-'));
    let line = 0;
    const model = (x: tf.Tensor) =>
      NameScope.run('head', () => {
        line = lineHere() + 1;
        return tf.relu(tf.add(x, 1));
      });
    const executor = inferenceModel(model, { options: new Options().modelName('sourced').enableProfiling(dir) });
    await executor.compile(tf.ones([4]));
    const html = readFileSync(join(dir, 'sourced', readdirSync(join(dir, 'sourced')).find((f) => f.endsWith('.html'))!), 'utf8');
    expect(html).toContain(`<td>head</td><td>(unannotated)</td><td>${FILE}:${line}:`);
    executor.destroy();
    // The same function written elsewhere compiles to the same executable: a memory hit of the cache.
    const cache = join(dir, 'cache');
    const same = (x: tf.Tensor) => NameScope.run('head', () => tf.relu(tf.add(x, 1)));
    const first = inferenceModel(model, { options: new Options().enableExecutableCaching(cache) });
    await first.compile(tf.ones([4]));
    const before = executableCacheStatistics();
    const second = inferenceModel(same, { options: new Options().enableExecutableCaching(cache) });
    await second.compile(tf.ones([4]));
    expect(executableCacheStatistics().compilations - before.compilations).toBe(0);
    first.destroy();
    second.destroy();
  });
});
