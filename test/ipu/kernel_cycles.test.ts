/**
 * The cost model of one kernel, against cycle counts computed by hand from
 * the documented constants.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { GC200, Options, inferenceModel, type IpuTargetSpec } from 'poptfjs';
import { planMatMul } from '../../lib/ipu/matmul_plan.js';
import { smallIpuTarget } from '../helpers.js';

const GC200_TILE = smallIpuTarget({ tiles: 1 });

async function timelineOf(fn: (x: tf.Tensor) => tf.Tensor, input: tf.Tensor, target: Partial<IpuTargetSpec> = {}) {
  const executor = inferenceModel(fn, { options: new Options().ipuTarget({ hostLinkBandwidth: 1e30, ...target }) });
  await executor.compile(input);
  return executor.executable.hardware.timeline;
}

describe('kernel cycles', () => {
  it('plans a product on one tile: the activation operand is brought in, the AMP makes 8 × 16 blocks over the rows', () => {
    // [8 × 32] · [32 × 16] in float32, the right operand a weight laid out for the product.
    const plan = planMatMul({ groups: 1, rows: 8, depth: 32, columns: 16, rightResident: true, precision: 'float32', partials: 'float32' }, GC200_TILE);
    expect(plan.split).toEqual({ groups: 1, rows: 1, columns: 1, depth: 1, serial: 1 });
    // 8 × 32 floats at 4 bytes a cycle.
    expect(plan.cycles.exchange).toBe((8 * 32 * 4) / 4);
    // AMP: 4 passes of 8 inputs × 16 outputs; each 171 cycles plus 8 cycles a row over 6 workers (2 rows each): 162 + 4 × (171 + 6 × 8 × 2).
    expect(plan.unit).toBe('amp');
    expect(plan.cycles.compute).toBe(162 + 4 * (171 + 6 * 8 * 2));
    expect(plan.cycles.reduction).toBe(0);
    expect(plan.temporaryBytes).toBe(8 * 32 * 4);
  });

  it('computes an outer product with vector instructions when the AMP would waste its depth', () => {
    // [64 × 1] · [1 × 64]: one useful input channel of the AMP's 8; vector MACs are 2 a cycle in float32.
    const plan = planMatMul({ groups: 1, rows: 64, depth: 1, columns: 64, precision: 'float32', partials: 'float32' }, GC200_TILE);
    expect(plan.unit).toBe('vector');
    expect(plan.cycles.compute).toBe(170 + (64 * 64) / 2);
    // Both operands are activations and are brought in.
    expect(plan.cycles.exchange).toBe(((64 + 64) * 4) / 4);
  });

  it("pads channels that are not a multiple of the AMP's grain by rearranging the operands, as poplin's planner costs it", () => {
    // lib/poplin/ConvModel.cpp, addTransformCycleEstimate: padded input channels rearrange the input and the weights,
    // padded output channels the weights and the output; each costs its bytes per tile over the exchange (4 a cycle) and
    // a copy of 5/4 cycles an element (5/3 when the channels it groups are not a multiple of 4 halves).
    const shape = { groups: 1, rows: 24, rightResident: true, precision: 'float16' as const, partials: 'float16' as const };
    const aligned = planMatMul({ ...shape, depth: 32, columns: 16 }, GC200_TILE);
    expect(aligned.cycles.rearrangement).toBe(0);
    // Depth 20 of the AMP's 16: the [24 × 20] input (960 B) and the [20 × 16] weight (640 B), 320 channels each.
    const paddedDepth = planMatMul({ ...shape, depth: 20, columns: 16 }, GC200_TILE);
    expect(paddedDepth.unit).toBe('amp');
    expect(paddedDepth.cycles.rearrangement).toBe((960 * 5) / (2 * 4) + (640 * 5) / (2 * 4) + (960 + 640) / 4);
    // Two passes over the depth; the input brought in (960 B), then the rearrangement.
    expect(paddedDepth.cycles.compute).toBe(162 + 2 * (171 + 6 * 4 * 4) + 600 + 400);
    expect(paddedDepth.cycles.exchange).toBe(960 / 4 + (960 + 640) / 4);
    // 18 columns of the AMP's 16: the [16 × 18] weight (576 B, 288 channels) and the [24 × 18] output (864 B, 18 channels, not a multiple of 4).
    const paddedColumns = planMatMul({ ...shape, depth: 16, columns: 18 }, GC200_TILE);
    expect(paddedColumns.cycles.rearrangement).toBe((576 * 5) / (2 * 4) + (864 * 5) / (2 * 3) + (576 + 864) / 4);
  });

  it("splits the depth over tiles in whole groups of the AMP's 16 input channels, as poplin's planner splits its grains", () => {
    // lib/poplin/ConvModel.cpp, getInChanGrainSizes: the input channels are split in groups of the vertex's input
    // channels. [1 × 48] · [48 × 16] in float16 on 64 tiles: the depth goes to 1, 2 or 3 tiles (48, 32 or 16 a tile),
    // never to 48 tiles of one channel each. On 3 tiles: 16 halves brought in (8 cycles); one row computed with vector
    // instructions, 170 + 16 × 16 / 4; the 16 partial sums reduced by 3 tiles, each taking 6 from 2 others at 2 bytes and
    // 1/4 cycle an element: 12 × (2/4 + 1/4).
    const plan = planMatMul({ groups: 1, rows: 1, depth: 48, columns: 16, rightResident: true, precision: 'float16', partials: 'float16' }, smallIpuTarget({ tiles: 64 }));
    expect(plan.split).toEqual({ groups: 1, rows: 1, columns: 1, depth: 3, serial: 1 });
    expect(plan.cycles.exchange).toBe(8);
    expect(plan.cycles.compute).toBe(170 + (16 * 16) / 4);
    expect(plan.cycles.reduction).toBe(12 * (2 / 4 + 1 / 4));
  });

  it('runs FP16.16 at 64 multiply-accumulates a cycle and FP16 with float32 partials at 32', () => {
    const shape = { groups: 1, rows: 600, depth: 64, columns: 64, rightResident: true, precision: 'float16' as const };
    const half = planMatMul({ ...shape, partials: 'float16' }, GC200_TILE);
    const float = planMatMul({ ...shape, partials: 'float32' }, GC200_TILE);
    // 16 × 16 passes at 4 cycles a row, against 16 × 8 passes at 4 cycles a row.
    expect(half.cycles.compute).toBe(162 + 4 * 4 * (171 + 6 * 4 * 100));
    expect(float.cycles.compute).toBe(162 + 4 * 8 * (171 + 6 * 4 * 100));
  });

  it('times an element-wise kernel as a vertex plus cycles per element over the tiles, and a sync', async () => {
    // 1,472 × 10 float32 additions: 10 per tile at 1.5 cycles each, 170 cycles of vertex, 90 of sync.
    const timeline = await timelineOf((x) => tf.add(x, x), tf.ones([GC200.tiles, 10]));
    const compute = timeline.segments.find((s) => s.kind === 'compute')!;
    const sync = timeline.segments.find((s) => s.kind === 'sync' && s.label === 'tile syncs')!;
    expect((compute.end - compute.start) * GC200.clockHz).toBeCloseTo(170 + 10 * 1.5, 6);
    expect((sync.end - sync.start) * GC200.clockHz).toBeCloseTo(90, 6);
  });

  it('prices transcendental functions from poplibs estimates: exp at 3 cycles an element in float32', async () => {
    const timeline = await timelineOf((x) => tf.exp(x), tf.ones([GC200.tiles, 100]));
    const compute = timeline.segments.find((s) => s.kind === 'compute')!;
    expect((compute.end - compute.start) * GC200.clockHz).toBeCloseTo(170 + 100 * 3, 6);
  });

  it('takes views for free: a reshape and a transpose add no time', async () => {
    const plain = await timelineOf((x) => tf.exp(x), tf.ones([GC200.tiles, 100]));
    const viewed = await timelineOf((x) => tf.exp(tf.transpose(tf.reshape(x, [100, GC200.tiles]))), tf.ones([GC200.tiles, 100]));
    expect(viewed.cycles).toBe(plain.cycles);
  });

  it('counts cycles at the target clock: the same kernels take 1.33/1.85 of the time on a Bow IPU', async () => {
    const model = (x: tf.Tensor) => tf.exp(tf.matMul(x, tf.ones([256, 256])));
    const gc200 = await timelineOf(model, tf.ones([512, 256]));
    const bow = await timelineOf(model, tf.ones([512, 256]), { ipu: 'Bow' });
    expect(bow.cycles).toBe(gc200.cycles);
    expect(bow.duration / gc200.duration).toBeCloseTo(1.33 / 1.85, 9);
  });
});
