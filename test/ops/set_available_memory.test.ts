/**
 * `ops.setAvailableMemory`: the temporary memory one matrix product or
 * convolution may take, as its planner sees it.
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Options, inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';
import { expectClose, smallIpuTarget } from '../helpers.js';

/** Collects the log lines written from now on. */
function collectLog(): string[] {
  const lines: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  return lines;
}

afterEach(() => vi.restoreAllMocks());

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

  it('refuses a proportion outside (0, 1]', () => {
    const x = tf.zeros([2, 2]);
    for (const bad of [0, -0.5, 1.5, Number.NaN]) {
      expect(() => ops.setAvailableMemory(x, bad)).toThrow(
        `setAvailableMemory: the proportion must be a number in (0, 1] (of a tile's memory the op may use for temporaries; the default is 0.6), got ${bad}`,
      );
    }
    expect(() => ops.setAvailableMemory(x, '0.5' as never)).toThrow('setAvailableMemory: the proportion must be a number in (0, 1]');
  });

  it('is the identity, with a warning, on a tensor no product, convolution, gather or scatter made (test_return_and_use_nested_input)', async () => {
    // PopTorch's tests/inputs_test.py: set_available_memory on a constant, returned and used.
    const lines = collectLog();
    const executor = inferenceModel((input: tf.Tensor) => {
      const c = ops.setAvailableMemory(tf.tensor1d([1]), 0.1);
      return [c, [c, tf.add(input, c)]];
    });
    expect(await executor.run(tf.tensor1d([0]))).toEqual([expect.anything(), [expect.anything(), expect.anything()]]);
    const [c, [c2, sum]] = (await executor.run(tf.tensor1d([1]))) as unknown as [tf.Tensor, [tf.Tensor, tf.Tensor]];
    expect([c.dataSync()[0], c2.dataSync()[0], sum.dataSync()[0]]).toEqual([1, 1, 2]);
    const elementwise = inferenceModel((a: tf.Tensor) => ops.setAvailableMemory(tf.exp(a), 0.3));
    await elementwise.compile(tf.zeros([2]));
    const input = inferenceModel((a: tf.Tensor) => ops.setAvailableMemory(a, 0.3));
    await input.compile(tf.zeros([2]));
    vi.restoreAllMocks();
    const warnings = lines.filter((l) => l.includes(' W: setAvailableMemory'));
    expect(warnings).toHaveLength(3);
    expect(warnings[1]).toContain(
      'setAvailableMemory: x is the output of Exp, which follows no matrix product, convolution, gather or scatter: the proportion 0.3 changes nothing (as in PopTorch, the call is the identity)',
    );
    expect(warnings[2]).toContain('setAvailableMemory: x is a tensor no kernel of the model made');
    expect(elementwise.executable.graph.nodes.every((n) => n.annotations.availableMemoryProportion === undefined)).toBe(true);
  });

  it('applies through the reshape, bias and activation a dense layer puts after its product on a 4-D input (test_available_memory_linear)', async () => {
    // PopTorch's tests/ops_test.py: a convolution, then a linear layer on its 4-D output; the proportion goes to the matmul, not the add.
    for (const activation of ['linear', 'relu'] as const) {
      const model = tf.sequential({
        layers: [tf.layers.conv2d({ filters: 3, kernelSize: 3, inputShape: [5, 5, 3] }), tf.layers.dense({ units: 3, activation })],
      });
      const executor = inferenceModel((x: tf.Tensor) => ops.setAvailableMemory(model.apply(x) as tf.Tensor, 0.3));
      const x = tf.randomUniform([2, 5, 5, 3], 0, 1, 'float32', 3);
      expectClose((await executor.run(x)) as tf.Tensor, model.predict(x) as tf.Tensor, 1e-5, 1e-6);
      const nodes = executor.executable.graph.nodes;
      expect(nodes.filter((n) => n.annotations.availableMemoryProportion !== undefined).map((n) => [n.kernel, n.annotations.availableMemoryProportion])).toEqual([
        [nodes.find((n) => /MatMul/.test(n.kernel))!.kernel, 0.3],
      ]);
      executor.destroy();
    }
    // The first product found behind a relu (PopTorch looks at the ops just before the one that made x).
    const relu = await compiled((a, b) => ops.setAvailableMemory(tf.relu(tf.matMul(a, b)), 0.1));
    expect(relu.executable.graph.nodes.find((n) => n.kernel === 'BatchMatMul')!.annotations.availableMemoryProportion).toBe(0.1);
  });

  it('is kept on an embedding lookup, with a warning that the simulated IPU gives it no temporaries (test_available_memory_scatter_add)', async () => {
    const lines = collectLog();
    const model = tf.sequential({ layers: [tf.layers.embedding({ inputDim: 10, outputDim: 4, inputLength: 3 })] });
    const executor = inferenceModel((ids: tf.Tensor) => ops.setAvailableMemory(model.apply(ids) as tf.Tensor, 0.9));
    const ids = tf.tensor2d([[1, 2, 9]], [1, 3], 'int32');
    expectClose((await executor.run(ids)) as tf.Tensor, model.predict(ids) as tf.Tensor);
    vi.restoreAllMocks();
    const gather = executor.executable.graph.nodes.find((n) => n.kernel === 'GatherV2')!;
    expect(gather.annotations.availableMemoryProportion).toBe(0.9);
    expect(executor.irText()).toMatch(/GatherV2\(.*# .*availableMemoryProportion 0\.9/);
    expect(lines.filter((l) => l.includes(' W: setAvailableMemory'))).toEqual([
      expect.stringContaining(
        'setAvailableMemory: the proportion 0.9 is kept on the GatherV2 that made x, but the simulated IPU gives gathers and scatters no temporary memory, so it changes no figure',
      ),
    ]);
  });

  it("sets a convolution layer's proportion", async () => {
    const model = tf.sequential({ layers: [tf.layers.conv2d({ filters: 8, kernelSize: 3, inputShape: [16, 16, 4] })] });
    const executor = inferenceModel((x: tf.Tensor) => ops.setAvailableMemory(model.apply(x) as tf.Tensor, 0.2));
    await executor.compile(tf.zeros([1, 16, 16, 4]));
    const conv = executor.executable.graph.nodes.find((n) => /Conv2D/.test(n.kernel))!;
    expect(conv.annotations.availableMemoryProportion).toBe(0.2);
  });
});
