/**
 * `ops.setAvailableMemory`: the temporary memory one matrix product or
 * convolution may take, as its planner sees it.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';
import { expectClose, smallIpuTarget } from '../helpers.js';

// One tile of 1 MiB: Poplar's default proportion, 0.6, leaves 629,146 bytes for temporaries.
const SMALL_TILE = { tiles: 1, memoryPerTile: 2 ** 20 };

async function compiled(fn: (a: tf.Tensor, b: tf.Tensor) => tf.Tensor) {
  const executor = inferenceModel(fn, { options: new Options().ipuTarget(SMALL_TILE) });
  await executor.compile(tf.zeros([4, 256]), tf.zeros([256, 256]));
  return executor;
}

describe('ops.setAvailableMemory', () => {
  it('is the identity on the numbers', async () => {
    const a = tf.randomNormal([4, 256]);
    const b = tf.randomNormal([256, 256]);
    const executor = await compiled((x, y) => ops.setAvailableMemory(tf.matMul(x, y), 0.1));
    expectClose((await executor.run(a, b)) as tf.Tensor, tf.matMul(a, b), 1e-5, 1e-4);
    expect(ops.setAvailableMemory(a, 0.5)).toBe(a);
  });

  it("makes that product's planner fit its temporary memory in the proportion", async () => {
    const plain = await compiled((x, y) => tf.matMul(x, y));
    const limited = await compiled((x, y) => ops.setAvailableMemory(tf.matMul(x, y), 0.1));
    // By default the tile receives both operands at once: (4 × 256 + 256 × 256) × 4 bytes, within 0.6 of 1 MiB.
    const temporary = (e: typeof plain) => e.executable.hardware.memory.ipus[0]!.peak.temporary;
    expect(temporary(plain)).toBe((4 * 256 + 256 * 256) * 4);
    // With 0.1 (104,858 bytes) the left operand (4,096 bytes) stays and the right one's 262,144 bytes come in serial steps:
    // 4,096 + 262,144 / s fits from s = 3.
    expect(temporary(limited)).toBeCloseTo(4096 + 262144 / 3, 6);
    const node = limited.executable.graph.nodes.find((n) => n.kernel === 'BatchMatMul')!;
    expect(node.annotations.availableMemoryProportion).toBe(0.1);
    expect(limited.irText()).toMatch(/BatchMatMul\(.*# .*availableMemoryProportion 0\.1/);
    const target = smallIpuTarget(SMALL_TILE);
    const cost = kernelCost(limited.executable.graph, node, target);
    expect(cost.plan!.split.serial).toBe(3);
    // Two more steps, each a vertex call (162 cycles) and two syncs (90 each), make it slower.
    const plainNode = plain.executable.graph.nodes.find((n) => n.kernel === 'BatchMatMul')!;
    expect(cost.compute - kernelCost(plain.executable.graph, plainNode, target).compute).toBe(2 * (162 + 2 * 90));
    // The proportion travels with the executable.
    const restored = graphFromMessage(graphMessage(limited.executable.graph), 'test');
    expect(restored.nodes.find((n) => n.kernel === 'BatchMatMul')!.annotations.availableMemoryProportion).toBe(0.1);
  });

  it("applies to that product's backward products, and to no other product", async () => {
    const backwardTemporary = async (proportion?: number) => {
      const w = tf.variable(tf.zeros([256, 256]), true);
      const v = tf.variable(tf.zeros([256, 256]), true);
      const fn = (x: tf.Tensor) => {
        const h = tf.matMul(x, w);
        const limited = proportion === undefined ? h : ops.setAvailableMemory(h, proportion);
        return ops.identityLoss(tf.sum(tf.matMul(limited, v)), 'sum');
      };
      const executor = trainingModel(fn, { options: new Options().ipuTarget({ tiles: 1, memoryPerTile: 16 * 2 ** 20 }), optimizer: new optim.SGD([w, v], { lr: 0.1 }) });
      await executor.compile(tf.zeros([256, 256]));
      const graph = executor.executable.graph;
      // Costed on the small tile, where 0.1 binds.
      const target = smallIpuTarget(SMALL_TILE);
      const products = graph.nodes.filter((n) => n.kernel === 'BatchMatMul');
      const first = products[0]!.id;
      return products.map((n) => ({
        backwardOfFirst: n.annotations.gradOf === first,
        ofFirst: n.id === first || n.annotations.gradOf === first,
        bytes: kernelCost(graph, n, target).temporaryBytes,
      }));
    };
    const plain = await backwardTemporary();
    const limited = await backwardTemporary(0.1);
    limited.forEach((p, i) => {
      if (p.ofFirst) expect(p.bytes).toBeLessThanOrEqual(plain[i]!.bytes);
      else expect(p.bytes).toBe(plain[i]!.bytes);
    });
    // A backward product of the first one runs in serial steps too.
    expect(limited.some((p, i) => p.backwardOfFirst && p.bytes < plain[i]!.bytes)).toBe(true);
  });

  it('refuses a proportion outside (0, 1] and a tensor no product or convolution made', async () => {
    const x = tf.zeros([2, 2]);
    for (const bad of [0, -0.5, 1.5, Number.NaN]) {
      expect(() => ops.setAvailableMemory(x, bad)).toThrow(
        `setAvailableMemory: the proportion must be a number in (0, 1] (of a tile's memory the op may use for temporaries; the default is 0.6), got ${bad}`,
      );
    }
    expect(() => ops.setAvailableMemory(x, '0.5' as never)).toThrow('setAvailableMemory: the proportion must be a number in (0, 1]');
    const relu = inferenceModel((a: tf.Tensor, b: tf.Tensor) => ops.setAvailableMemory(tf.relu(tf.matMul(a, b)), 0.3));
    await expect(relu.compile(x, x)).rejects.toThrow(
      'setAvailableMemory: x must be the output of a matrix product or convolution, whose planner takes the proportion; got the output of Relu',
    );
    const input = inferenceModel((a: tf.Tensor) => ops.setAvailableMemory(a, 0.3));
    await expect(input.compile(x)).rejects.toThrow('got a tensor no kernel of the model made');
  });

  it("sets a convolution layer's proportion", async () => {
    const model = tf.sequential({ layers: [tf.layers.conv2d({ filters: 8, kernelSize: 3, inputShape: [16, 16, 4] })] });
    const executor = inferenceModel((x: tf.Tensor) => ops.setAvailableMemory(model.apply(x) as tf.Tensor, 0.2));
    await executor.compile(tf.zeros([1, 16, 16, 4]));
    const conv = executor.executable.graph.nodes.find((n) => /Conv2D/.test(n.kernel))!;
    expect(conv.annotations.availableMemoryProportion).toBe(0.2);
  });
});
