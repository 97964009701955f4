import { describe, expect, it } from 'vitest';
import { Options, autoPlan, plan, tf } from 'poptfjs';
import { tracePlan, type PlanRequest } from '../../lib/executor/model_plan.js';
import type { Graph } from '../../lib/ir/graph.js';
import { MicroBatchDerivationError, MicroBatchGraph } from '../../lib/planner/micro_batch_graph.js';

/** A small CNN as users write one: convolutions with batch norm (its statistics divide by m × h × w), a flatten, a dense head. */
const cnn = () =>
  tf.sequential({
    layers: [
      tf.layers.conv2d({ inputShape: [16, 16, 3], filters: 8, kernelSize: 3, padding: 'same', name: 'conv_a' }),
      tf.layers.batchNormalization({ name: 'bn_a' }),
      tf.layers.activation({ activation: 'relu', name: 'relu_a' }),
      tf.layers.conv2d({ filters: 16, kernelSize: 3, strides: 2, padding: 'same', name: 'conv_b' }),
      tf.layers.batchNormalization({ name: 'bn_b' }),
      tf.layers.activation({ activation: 'relu', name: 'relu_b' }),
      tf.layers.flatten({ name: 'flat' }),
      tf.layers.dense({ units: 10, name: 'head' }),
    ],
  });

const TRAINING = { loss: 'categoricalCrossentropy', optimizer: 'sgd' } as const;

/** Batch-norm statistics per replica, on an IPU of 16 tiles × 64 KiB (1 MiB), where micro-batch 8 does not fit. */
const SMALL_IPU = () => new Options().broadcastBuffers(false).ipuTarget({ tiles: 16, memoryPerTile: 64 * 1024 });

function request(m: number): PlanRequest {
  return { ...TRAINING, options: new Options().broadcastBuffers(false), inputs: [{ shape: [m, 16, 16, 3] }], target: { shape: [m, 10] } };
}

/** The graph without the names of its parameters and layers, which tfjs may number anew at each build. */
function unnamed(graph: Graph): string {
  const { values, nodes } = graph;
  return JSON.stringify({ values, nodes }, (key, v) =>
    key === 'name' || key === 'layer' || key === 'scope' ? undefined : ArrayBuffer.isView(v) ? Array.from(v as Float32Array) : v,
  );
}

describe('MicroBatchGraph', () => {
  it("derives a CNN's training graph at another micro-batch, batch-norm counts, flatten and loss constants included, equal to its trace there", async () => {
    const [at3, at5, at7] = [await tracePlan(cnn, request(3)), await tracePlan(cnn, request(5)), await tracePlan(cnn, request(7))];
    const derived = new MicroBatchGraph(at3.graph, 3, at5.graph, 5).at(7);
    expect(unnamed(derived)).toBe(unnamed(at7.graph));
    // The batch-norm count at 7 is a value no trace gave: 7 × 16 × 16 for the first, 7 × 8 × 8 for the second.
    const counts = derived.values.flatMap((v) => (v.source.kind === 'constant' && v.shape.length === 0 && v.source.data ? [v.source.data[0]] : []));
    expect(counts).toContain(7 * 16 * 16);
    expect(counts).toContain(7 * 8 * 8);
  });

  it('refuses a micro-batch of 1, where tfjs traces other nodes (broadcasts and gradients of a dimension of 1), naming the dimension', async () => {
    const [at1, at2, at4] = [await tracePlan(cnn, request(1)), await tracePlan(cnn, request(2)), await tracePlan(cnn, request(4))];
    expect(() => new MicroBatchGraph(at1.graph, 1, at4.graph, 4)).toThrow(MicroBatchDerivationError);
    const graph = new MicroBatchGraph(at2.graph, 2, at4.graph, 4);
    expect(() => graph.at(1)).toThrow(/dimension 0 of value %\d+ would be 1 at micro-batch 1/);
    expect(() => graph.at(1)).toThrow(MicroBatchDerivationError);
  });
});

describe('autoPlan() of a CNN', () => {
  it('traces it three times for four micro-batch sizes, and a candidate at a derived size is the plan() of its configuration', async () => {
    const search = await autoPlan(cnn, {
      ipus: 2,
      globalBatch: 64,
      ...TRAINING,
      inputs: [{ shape: [16, 16, 3] }],
      target: { shape: [10] },
      options: SMALL_IPU(),
      space: { ipusPerReplica: [1], microBatch: [1, 2, 4, 8, 16, 32], recomputation: ['None'], optimizerState: ['on chip'], deviceIterations: [1] },
    });
    // 1 first (the units), then 16 and 8, whose graphs give the graph at every other size: 4 is derived.
    const sizes = new Set([...search.candidates, ...search.rejected].map((c) => c.microBatch));
    expect([...sizes].sort((x, y) => x - y)).toEqual([1, 4, 8, 16]);
    expect(search.traces).toBe(3);
    // Each candidate at the derived size has the figures plan() gives for its options.
    const derived = search.candidates.filter((c) => c.microBatch === 4);
    expect(derived.length).toBeGreaterThan(0);
    for (const c of derived) {
      const planned = await plan(cnn, { ...request(c.microBatch), options: c.options });
      expect(c.throughput).toBe(planned.throughput);
      expect(c.plan.memory.ipus.map((ipu) => ipu.used)).toEqual(planned.memory.ipus.map((ipu) => ipu.used));
    }
  });
});
