/**
 * The cost model of the one-pass relu kernels (`poptfjs.AddRelu`,
 * `poptfjs.ReluGrad`) that the relu patterns put into wasm training graphs,
 * against cycle counts computed by hand from the documented constants: one
 * element-wise vertex doing both operations of each element.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { POPTFJS_KERNELS } from '../../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { nodeCost } from '../../lib/ir/node_cost.js';
import { applyPatterns, Patterns } from '../../lib/ir/patterns/patterns.js';
import { traceTraining } from '../../lib/trace/trace_model.js';
import { smallIpuTarget } from '../helpers.js';
import { nodesOf, onWasmBackend } from '../ir/patterns/graph_results.js';

onWasmBackend();

/** The training step of a dense layer of 6 units with a relu, on a batch of 50, with the relu patterns applied. */
function fusedDenseStep() {
  const model = tf.sequential({ layers: [tf.layers.dense({ units: 6, inputShape: [4], activation: 'relu' })] });
  const { graph } = traceTraining(model, 'meanSquaredError', [tf.ones([50, 4]), tf.ones([50, 6])]);
  return applyPatterns(graph, new Patterns('Default'), { backend: 'wasm', training: true }).graph;
}

describe('the cost of the one-pass relu kernels', () => {
  it('times poptfjs.AddRelu as one vertex adding and clamping each element, with the bias exchanged', () => {
    const graph = fusedDenseStep();
    const [node] = nodesOf(graph, POPTFJS_KERNELS.addRelu);
    // 300 elements over 7 tiles: 43 a tile at 1.5 (add) + 1.5 (relu) cycles in float32, 170 cycles of vertex, one sync;
    // each tile gets its 6 bias elements (24 bytes at 4 bytes a cycle).
    const cost = kernelCost(graph, node!, smallIpuTarget({ tiles: 7 }));
    expect(cost).toEqual({ compute: 170 + 43 * 3, exchange: 6, sync: 90, temporaryBytes: 0 });
    // Reads a and the bias, writes the sum and the relu: an add and a max per element.
    expect(nodeCost(graph, node!)).toEqual({ flops: 600, bytes: (300 + 6 + 300 + 300) * 4 });
  });

  it('times poptfjs.ReluGrad as one vertex stepping and multiplying each element', () => {
    const graph = fusedDenseStep();
    const [node] = nodesOf(graph, POPTFJS_KERNELS.reluGrad);
    // 300 elements over 7 tiles: 43 a tile at 2 (step) + 1.5 (multiply) cycles in float32.
    const cost = kernelCost(graph, node!, smallIpuTarget({ tiles: 7 }));
    expect(cost).toEqual({ compute: 170 + 43 * 3.5, exchange: 0, sync: 90, temporaryBytes: 0 });
    expect(nodeCost(graph, node!)).toEqual({ flops: 600, bytes: 300 * 3 * 4 });
  });
});
