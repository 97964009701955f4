/**
 * poplibs' convolution dithering (`enableConvDithering`, lib/poplin/ConvPlan.cpp
 * `getStartTile`, lib/poplin/Convolution.cpp `linearizeTileIndices`) through
 * `ops.MultiConv.enableConvDithering`: the start tile and direction of each
 * dithered convolution, and the convolution weights one tile holds.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { inferenceModel, ops } from 'poptfjs';
import { ditheredLayout } from '../../lib/ipu/conv_dithering.js';
import { nodeFlops } from '../../lib/ir/node_cost.js';
import { ipuKernelTarget, kernelCost, kernelCycles } from '../../lib/ipu/kernel_cycles.js';
import { multiConvTiles } from '../../lib/ipu/multi_conv_plan.js';
import { Messages, decodeMessage, encodeMessage } from '../../lib/proto/executable_proto.js';
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';

const shape = (field: number[]) => ({ convGroups: 1, batchSize: 1, inputField: field, inputChannelsPerGroup: 8, outputChannelsPerGroup: 16 });

describe("poplibs' dithered start tile", () => {
  it("is getStartTile's: boost's hash_combine of the forward shape from 2^32/phi, a multiple of 2 tiles, the direction its lowest bit", () => {
    // Computed apart from poptfjs with boost's hash_combine on 64-bit size_t: seed ^= v + 0x9e3779b9 + (seed << 6) + (seed >> 2).
    expect(ditheredLayout(shape([1, 1]), false, 1472)).toEqual({ startTile: 1266, descending: false });
    expect(ditheredLayout(shape([3, 3]), false, 1472)).toEqual({ startTile: 672, descending: false });
    expect(ditheredLayout(shape([16, 16]), false, 1472)).toEqual({ startTile: 408, descending: false });
    // In training the batch and channels go in as one product, so the three passes agree; here it turns the layout round.
    expect(ditheredLayout(shape([16, 16]), true, 64)).toEqual({ startTile: 46, descending: true });
    expect(ditheredLayout(shape([8, 8]), true, 64)).toEqual({ startTile: 58, descending: false });
  });
});

describe('ops.MultiConv.enableConvDithering', () => {
  const w1 = tf.variable(tf.randomNormal([1, 1, 8, 16], 0, 0.1, 'float32', 1), true, 'dither_w1');
  const w2 = tf.variable(tf.randomNormal([1, 1, 8, 16], 0, 0.1, 'float32', 2), true, 'dither_w2');
  /** Two 1×1 convolutions, on a 1×1 and a 3×3 input, in one MultiConv. */
  const model = (multiConv: ops.MultiConv) => (x: tf.Tensor, y: tf.Tensor) =>
    multiConv.run(() => [tf.conv2d(x as tf.Tensor4D, w1 as tf.Tensor4D, 1, 'same'), tf.conv2d(y as tf.Tensor4D, w2 as tf.Tensor4D, 1, 'same')]);
  const inputs = [tf.ones([1, 1, 1, 8]), tf.ones([1, 3, 3, 8])];

  it('spreads convolutions that use part of the tiles, so their weights do not stack on the first tiles', async () => {
    const figures: number[] = [];
    for (const dithering of [false, true]) {
      const executor = inferenceModel(model(new ops.MultiConv().planType(ops.MultiConvPlanType.Serial).enableConvDithering(dithering)));
      await executor.compile(...inputs);
      const { graph, hardware } = executor.executable;
      const { spec } = hardware;
      const target = ipuKernelTarget(spec, { availableMemoryProportion: 0.6, halfPartials: false });
      const [u1, u2] = graph.nodes.filter((n) => n.kernel === 'Conv2D').map((n) => kernelCost(graph, n, target).plan!.tilesUsed);
      // Each filter is 1 × 1 × 8 × 16 float32 = 512 bytes, spread over the tiles its plan uses.
      const [perTile1, perTile2] = [512 / u1!, 512 / u2!];
      if (dithering) {
        // Dithered: from tile 1266 up and from tile 672 up (above), ranges that do not meet.
        expect(1266 + u1!).toBeLessThanOrEqual(spec.tiles);
        expect(672 + u2!).toBeLessThanOrEqual(1266);
        expect(hardware.memory.ipus[0]!.convolutionWeightsPerTile).toBeCloseTo(Math.max(perTile1, perTile2), 12);
      } else {
        // Both from tile 0 up: the first tiles hold both.
        expect(hardware.memory.ipus[0]!.convolutionWeightsPerTile).toBeCloseTo(perTile1 + perTile2, 12);
      }
      figures.push(hardware.memory.ipus[0]!.convolutionWeightsPerTile!);
      if (dithering) {
        const read = graphFromMessage(decodeMessage(Messages.Graph, encodeMessage(Messages.Graph, graphMessage(graph)), 'graph'), 'graph');
        expect(read.nodes.filter((n) => n.kernel === 'Conv2D').map((n) => n.annotations.multiConv?.dithering)).toEqual([true, true]);
      }
      executor.destroy();
    }
    expect(figures[1]).toBeLessThan(figures[0]!);
  });

  it('lays a parallel group out share after share: its convolutions do not stack either', async () => {
    const executor = inferenceModel(model(new ops.MultiConv().planType(ops.MultiConvPlanType.Parallel)));
    await executor.compile(...inputs);
    const { graph, hardware } = executor.executable;
    const { spec } = hardware;
    const target = ipuKernelTarget(spec, { availableMemoryProportion: 0.6, halfPartials: false });
    const convs = graph.nodes.filter((n) => n.kernel === 'Conv2D');
    // The shares poplibs' multi-plan gives the two convolutions (test/ops/multi_conv.test.ts works them out by hand).
    const shares = multiConvTiles(
      convs.map((n) => nodeFlops(graph, n)),
      (c, tiles) => kernelCycles(kernelCost(graph, convs[c]!, { ...target, tiles })),
      spec.tiles,
      50,
      0.1,
    )!;
    const used = convs.map((n, i) => kernelCost(graph, n, { ...target, tiles: shares[i]! }).plan!.tilesUsed);
    // The first share from tile 0, the second from tile shares[0]: the plans stay in their shares, so no tile holds both.
    expect(used[0]!).toBeLessThanOrEqual(shares[0]!);
    expect(hardware.memory.ipus[0]!.convolutionWeightsPerTile).toBeCloseTo(Math.max(512 / used[0]!, 512 / used[1]!), 12);
    executor.destroy();
  });

  it('dithers only the convolutions it is set for', async () => {
    const executor = inferenceModel(model(new ops.MultiConv().planType(ops.MultiConvPlanType.Serial).enableConvDithering([false, true])));
    await executor.compile(...inputs);
    expect(executor.executable.graph.nodes.filter((n) => n.kernel === 'Conv2D').map((n) => n.annotations.multiConv?.dithering ?? false)).toEqual([false, true]);
    executor.destroy();
  });

  it('is refused on a parallel group, as poplibs refuses dithering with multi plans', async () => {
    const executor = inferenceModel(model(new ops.MultiConv().enableConvDithering(true)));
    await expect(executor.compile(...inputs)).rejects.toThrow(
      "Unsupported conv dithering with multi plans: MultiConv group 0 runs its 2 convolutions in parallel, each on its own part of the tiles, and poplibs' convolution planner cannot dither such a plan",
    );
  });
});
