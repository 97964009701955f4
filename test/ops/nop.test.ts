/**
 * `ops.nop`: an identity that no pattern removes, a copy on the simulated IPU.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { expectClose, smallIpuTarget } from '../helpers.js';

const ONE_TILE = { tiles: 1, memoryPerTile: 16 * 2 ** 20 };

async function compiled(fn: (x: tf.Tensor) => tf.Tensor, x: tf.Tensor) {
  const executor = inferenceModel(fn, { options: new Options().ipuTarget(ONE_TILE) });
  await executor.compile(x);
  return executor;
}

describe('ops.nop', () => {
  it('returns its input, eagerly and on the device', async () => {
    const x = tf.tensor2d([
      [1, -2],
      [3, -4],
    ]);
    expectClose(ops.nop(x), x);
    const executor = await compiled((v) => tf.relu(ops.nop(tf.neg(v))), x);
    expectClose((await executor.run(x)) as tf.Tensor, tf.relu(tf.neg(x)));
  });

  it('is a node of its own that NoOpRemoval keeps, where an Identity is removed', async () => {
    const x = tf.ones([2, 3]);
    const withNop = await compiled((v) => tf.relu(ops.nop(tf.neg(v))), x);
    const withIdentity = await compiled((v) => tf.relu(tf.clone(tf.neg(v))), x);
    const kernels = (e: typeof withNop) => e.executable.graph.nodes.map((n) => n.kernel);
    expect(kernels(withNop)).toEqual(['Neg', 'poptfjs.Nop', 'Relu']);
    expect(kernels(withIdentity)).toEqual(['Neg', 'Relu']);
    expect(withNop.irText()).toMatch(/= poptfjs\.Nop\(x=%\d+\)/);
  });

  it('passes its gradient through: training through a nop equals training without', async () => {
    const train = async (useNop: boolean) => {
      const w = tf.variable(
        tf.tensor2d([
          [0.5, -1],
          [2, 0.25],
        ]),
        true,
      );
      const fn = (x: tf.Tensor, y: tf.Tensor) => {
        const h = tf.matMul(x, w);
        const out = useNop ? ops.nop(h) : h;
        return [out, ops.identityLoss(tf.sum(tf.square(tf.sub(out, y))), 'sum')];
      };
      const executor = trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0.05 }) });
      for (let i = 0; i < 3; i++)
        await executor.run(
          tf.tensor2d([
            [1, 2],
            [3, 4],
          ]),
          tf.tensor2d([
            [0, 1],
            [1, 0],
          ]),
        );
      executor.copyWeightsToHost();
      return w;
    };
    expectClose(await train(true), await train(false));
  });

  it('costs a copy on each tile and takes the memory of its output', async () => {
    const x = tf.zeros([16, 32]);
    const withNop = await compiled((v) => {
      const n = tf.neg(v);
      return tf.add(ops.nop(n), n);
    }, x);
    const without = await compiled((v) => {
      const n = tf.neg(v);
      return tf.add(n, n);
    }, x);
    const graph = withNop.executable.graph;
    const node = graph.nodes.find((n) => n.kernel === 'poptfjs.Nop')!;
    const target = smallIpuTarget({ tiles: 8 });
    // 16 × 32 float32 = 2048 bytes, 256 a tile at 8 bytes a cycle, after a vertex's 170 cycles; one sync.
    expect(kernelCost(graph, node, target)).toEqual({ compute: 170 + 256 / 8, exchange: 0, sync: 90, temporaryBytes: 0 });
    // Without the nop, Add reads Neg's output twice and writes its own: two values of 2048 bytes working.
    // With it, the copy is a third value live while Add runs.
    const peak = (e: typeof withNop) => e.executable.hardware.memory.ipus[0]!.peak.working;
    expect(peak(without)).toBe(2 * 2048);
    expect(peak(withNop)).toBe(3 * 2048);
    // One more kernel's code (20 bytes on the one tile) and exchange buffers of 5% of the activations.
    const code = (e: typeof withNop) => e.executable.hardware.memory.ipus[0]!.byKind['code and exchange'];
    expect(code(withNop) - code(without)).toBe(20 + Math.round(0.05 * 3 * 2048) - Math.round(0.05 * 2 * 2048));
  });

  it('refuses what is not a tensor', () => {
    expect(() => ops.nop(3 as unknown as tf.Tensor)).toThrow('nop: expected a tf.Tensor, got number');
  });
});
