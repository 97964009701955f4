/**
 * Dropout in training holds no mask, as PopART runs it: its Dropout op draws
 * the random bits inside the op that applies them, and DropoutGrad takes the
 * seed, not the mask, and draws them again (popart willow/src/op/dropout.cpp,
 * `DropoutGradOp::gradInputInfo`). tfjs's `tf.dropout` makes the mask from a
 * uniform draw (`floor(draw + keep) / keep`); the memory plan gives those
 * values no storage and the backward pass re-runs the draw, and the time is
 * poprand's Dropout vertex, one pass that draws and applies the mask.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { half, Options, plan, planRecomputation, type Plan, type RecomputationType } from 'poptfjs';
import { dropoutMaskValues } from '../../lib/ir/dropout_masks.js';
import { ipuKernelTarget, kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { BOW } from '../../lib/ipu/target_spec.js';

const BATCH = 512;
const WIDTH = 256;

/**
 * Two dense products of `[BATCH, WIDTH]` by `[WIDTH, WIDTH]` with `between` them (dropout, or a scaling of the same
 * shape), in float32 or float16.
 */
async function planned(between: (h: tf.Tensor) => tf.Tensor, recomputation: RecomputationType = 'None', dtype: 'float32' | 'float16' = 'float32'): Promise<Plan> {
  return plan(
    () => {
      const weight = (name: string) => {
        const w = tf.variable(tf.fill([WIDTH, WIDTH], 0.01), true, name);
        return dtype === 'float16' ? half(w) : w;
      };
      const w1 = weight('w1');
      const w2 = weight('w2');
      return (x: tf.Tensor) => tf.matMul(between(tf.matMul(x, w1)), w2);
    },
    {
      options: new Options().autoRecomputation(recomputation),
      training: true,
      optimizer: 'sgd',
      loss: 'meanSquaredError',
      inputs: [{ shape: [BATCH, WIDTH], dtype }],
      target: { shape: [BATCH, WIDTH], dtype },
    },
  );
}

const dropout = (h: tf.Tensor) => tf.dropout(h, 0.5);
const scaled = (h: tf.Tensor) => tf.mul(h, 2);
const activations = (p: Plan) => p.memory.ipus[0]!.byKind.activations;

describe('dropout masks', () => {
  it('finds the draw and the arithmetic that make the mask, and nothing the mask is applied to', async () => {
    const { graph } = (await planned(dropout)).executable;
    const masks = dropoutMaskValues(graph);
    const maskMakers = graph.nodes.filter((n) => n.outputs.some((id) => masks[id])).map((n) => n.kernel);
    expect(maskMakers).toEqual(['poptfjs.RandomUniform', 'Add', 'Floor', 'RealDiv']);
    const applied = graph.nodes.filter((n) => n.kernel === 'Multiply' && n.inputs.some((id) => masks[id]));
    expect(applied.map((n) => n.annotations.pass)).toEqual(['forward', 'backward']);
    for (const n of applied) expect(n.outputs.some((id) => masks[id])).toBe(false);
  });

  it("holds the same activations as the model scaling by a constant instead: the input and the second product's left operand, no mask", async () => {
    const withDropout = await planned(dropout);
    const withScaling = await planned(scaled);
    // Held between the passes: the input x and the dropout's output (the second product's left operand), float32.
    const operandBytes = BATCH * WIDTH * 4;
    const stashed = (p: Plan) => p.memory.ipus[0]!.items.find((item) => item.kind === 'activations' && item.name.startsWith('stashed'))!.bytes;
    expect(stashed(withScaling)).toBe(2 * operandBytes);
    expect(stashed(withDropout)).toBe(2 * operandBytes);
    expect(activations(withDropout)).toBe(activations(withScaling));
  });

  it('draws the mask again in the backward pass, whatever the recomputation type', async () => {
    for (const type of ['None', 'Standard', 'RecomputeAll'] as const) {
      const { graph, placement } = (await planned(dropout, type)).executable;
      const rerun = [...planRecomputation(graph, placement, type).unitNodes.values()].flat().map((id) => graph.nodes[id]!.kernel);
      expect(rerun, type).toEqual(expect.arrayContaining(['poptfjs.RandomUniform', 'Add', 'Floor', 'RealDiv']));
    }
    const { graph, placement } = (await planned(scaled)).executable;
    expect(planRecomputation(graph, placement, 'None').unitNodes.size).toBe(0);
  });

  it("costs one pass of poprand's Dropout vertex where the mask is applied, and nothing for making the mask", async () => {
    const { graph } = (await planned(dropout)).executable;
    const masks = dropoutMaskValues(graph);
    const target = ipuKernelTarget(BOW, { availableMemoryProportion: 0.6, halfPartials: false });
    for (const node of graph.nodes.filter((n) => n.outputs.some((id) => masks[id]))) {
      expect(kernelCost(graph, node, target), node.kernel).toEqual({ compute: 0, exchange: 0, sync: 0, temporaryBytes: 0 });
    }
    // poplibs poprandCycleEstimators.cpp, Dropout: 6 + 24 × 6 workers + 2 cycles a 64-bit vector; 512 × 256 float32
    // over 1,472 tiles is 90 a tile, 45 vectors of two, none left over; one sync.
    const applied = graph.nodes.filter((n) => n.kernel === 'Multiply' && n.inputs.some((id) => masks[id]));
    for (const node of applied) expect(kernelCost(graph, node, target)).toEqual({ compute: 6 + 24 * 6 + 2 * 45, exchange: 0, sync: 90, temporaryBytes: 0 });
  });

  it('runs the dropout of a float16 model in float16, whatever the precision of the draw', async () => {
    const { graph } = (await planned(dropout, 'None', 'float16')).executable;
    const masks = dropoutMaskValues(graph);
    const target = ipuKernelTarget(BOW, { availableMemoryProportion: 0.6, halfPartials: true });
    // 90 float16 elements a tile: 23 vectors of four, the last one partial (9 cycles more).
    const applied = graph.nodes.filter((n) => n.kernel === 'Multiply' && n.inputs.some((id) => masks[id]));
    expect(applied).toHaveLength(2);
    for (const node of applied) expect(kernelCost(graph, node, target)).toEqual({ compute: 6 + 24 * 6 + 2 * 23 + 9, exchange: 0, sync: 90, temporaryBytes: 0 });
  });
});
