import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Block, Options, PoptfjsError, SyncPattern, inferenceModel } from 'poptfjs';
import type { Timeline, TimelineSegment } from '../../lib/ipu/timeline.js';
import { executionSummary } from '../../lib/report/summary_report.js';

/** Micro-batches per call, samples per micro-batch and features per sample (in and out of both stages). */
const M = 8;
const MICRO_BATCH = 4;
const FEATURES = 1024;
/** A host link that moves one micro-batch's inputs (or outputs), 4 × 1024 float32 = 16384 bytes, in 10 µs. */
const HOST_LINK = 16384 / 10e-6;
const H = (MICRO_BATCH * FEATURES * 4) / HOST_LINK;
/** Links between IPUs and syncs that cost nothing, so host I/O and each IPU's own work show. */
const TARGET = { ipuLinkBandwidth: 1e30, syncHopLatency: 0, hostLinkBandwidth: HOST_LINK };

/** Two equal dense layers, one per IPU: a 2-stage pipeline whose inputs and outputs are 16 KiB a micro-batch. */
function twoStageModel() {
  const layers = [0, 1].map((i) => {
    const l = tf.layers.dense({ units: FEATURES, inputShape: [FEATURES], useBias: false, kernelInitializer: tf.initializers.glorotUniform({ seed: i }) });
    l.apply(tf.zeros([1, FEATURES]));
    return l;
  });
  return (x: tf.Tensor) => {
    layers.forEach((layer, i) => {
      x = Block.run({ userId: `s${i}`, ipuId: i }, () => layer.apply(x) as tf.Tensor);
    });
    return x;
  };
}

async function compiled(pattern?: SyncPattern) {
  const options = new Options().deviceIterations(M).ipuTarget(TARGET);
  if (pattern !== undefined) options.syncPattern(pattern);
  const executor = inferenceModel(twoStageModel(), { options });
  await executor.compile(tf.ones([M * MICRO_BATCH, FEATURES]));
  return executor;
}

/** Seconds an IPU works in one of its steps: its compute, exchange and tile syncs over the call, shared by its M steps. */
function stepWork(timeline: Timeline, ipu: number): number {
  const a = timeline.ipus[ipu]!;
  return (a.compute + a.exchange + a.sync) / M;
}

const hostSegments = (timeline: Timeline, label: string) => timeline.segments.filter((s) => s.kind === 'host' && s.label === label);
const computeOf = (timeline: Timeline, label: string) => timeline.segments.find((s) => s.kind === 'compute' && s.label === label)!;
const overlaps = (a: TimelineSegment, b: TimelineSegment) => a.start < b.end && b.start < a.end;

describe('Options.syncPattern on the simulated timeline', () => {
  it("Full (the default) makes both IPUs wait for the whole call's inputs before the pipeline and its outputs after it", async () => {
    const executor = await compiled();
    const full = await compiled(SyncPattern.Full);
    const { timeline } = full.executable.hardware;
    expect(executor.executable.hardware.timeline).toEqual(timeline);
    expect(full.executable.syncPattern).toBeUndefined();
    const [w0, w1] = [stepWork(timeline, 0), stepWork(timeline, 1)];
    // M·H in; step 0 runs F0 only, steps 1..M-1 both stages, step M F1 only; M·H out.
    expect(timeline.duration).toBeCloseTo(M * H + w0 + (M - 1) * Math.max(w0, w1) + w1 + M * H, 12);
    for (const [label, start] of [
      ['host → device', 0],
      ['device → host', timeline.duration - M * H],
    ] as const) {
      const segments = hostSegments(timeline, label);
      expect(segments.map((s) => s.ipu)).toEqual([0, 1]);
      for (const s of segments) {
        expect(s.start).toBeCloseTo(start, 12);
        expect(s.end - s.start).toBeCloseTo(M * H, 12);
      }
    }
    expect(executionSummary(full.executable)).toContain('  host I/O: every IPU waits for each host transfer (Full)');
    executor.destroy();
    full.destroy();
  });

  it("SinglePipeline moves each micro-batch's inputs to IPU 0 and outputs from IPU 1 in their own steps, saving (M-1) transfers", async () => {
    const full = await compiled(SyncPattern.Full);
    const single = await compiled(SyncPattern.SinglePipeline);
    const timeline = single.executable.hardware.timeline;
    expect(single.executable.syncPattern).toBe('SinglePipeline');
    const [w0, w1] = [stepWork(timeline, 0), stepWork(timeline, 1)];
    expect(w0).toBeCloseTo(stepWork(full.executable.hardware.timeline, 0), 15);
    expect(w1).toBeCloseTo(stepWork(full.executable.hardware.timeline, 1), 15);
    // Step 0: IPU 0 receives micro-batch 0 and runs F0; steps 1..M-1: IPU 0 receives and runs F0 while IPU 1 runs F1
    // and sends its output; step M: IPU 1 runs F1 and sends the last output.
    expect(timeline.duration).toBeCloseTo(H + w0 + (M - 1) * Math.max(H + w0, w1 + H) + w1 + H, 12);
    // The two stages do equal work, so the call is shorter by M-1 micro-batches' transfers: 70 µs.
    expect(w0).toBeCloseTo(w1, 15);
    expect(full.executable.hardware.timeline.duration - timeline.duration).toBeCloseTo((M - 1) * H, 12);
    expect((M - 1) * H).toBeCloseTo(70e-6, 15);

    const inputs = hostSegments(timeline, 'host → device');
    const outputs = hostSegments(timeline, 'device → host');
    expect(inputs.map((s) => s.ipu)).toEqual(new Array(M).fill(0));
    expect(outputs.map((s) => s.ipu)).toEqual(new Array(M).fill(1));
    for (let m = 0; m < M; m++) {
      const [input, output] = [inputs[m]!, outputs[m]!];
      expect(input.end - input.start).toBeCloseTo(H, 15);
      expect(output.end - output.start).toBeCloseTo(H, 15);
      // Micro-batch m arrives just before F0 reads it, and its output leaves just after F1 makes it.
      expect(input.end).toBeLessThanOrEqual(computeOf(timeline, `F0:${m}`).start);
      if (m > 0) expect(input.start).toBeGreaterThanOrEqual(computeOf(timeline, `F0:${m - 1}`).end);
      expect(output.start).toBeGreaterThanOrEqual(computeOf(timeline, `F1:${m}`).end);
      // While IPU 0 receives micro-batch m, IPU 1 computes micro-batch m-1.
      if (m > 0) expect(overlaps(input, computeOf(timeline, `F1:${m - 1}`))).toBe(true);
    }
    expect(executionSummary(single.executable)).toContain('  host I/O: each IPU syncs with the host on its own (SinglePipeline)');
    full.destroy();
    single.destroy();
  });

  it('with I/O tiles but no input or output marked for overlap, the host transfers go through the compute tiles as without them', async () => {
    for (const pattern of [SyncPattern.Full, SyncPattern.SinglePipeline]) {
      const options = new Options().deviceIterations(M).ipuTarget(TARGET).syncPattern(pattern);
      options.TensorLocations.numIOTiles(64);
      const executor = inferenceModel(twoStageModel(), { options });
      await executor.compile(tf.ones([M * MICRO_BATCH, FEATURES]));
      const { timeline } = executor.executable.hardware;
      const [w0, w1] = [stepWork(timeline, 0), stepWork(timeline, 1)];
      if (pattern === SyncPattern.Full) {
        // As without I/O tiles: M·H in before the pipeline, M·H out after it.
        expect(timeline.duration).toBeCloseTo(M * H + w0 + (M - 1) * Math.max(w0, w1) + w1 + M * H, 12);
        expect(hostSegments(timeline, 'host → device').map((s) => [s.ipu, s.start])).toEqual([
          [0, 0],
          [1, 0],
        ]);
      } else {
        // As without I/O tiles: each micro-batch's input and output in the step that reads or makes it.
        expect(timeline.duration).toBeCloseTo(H + w0 + (M - 1) * Math.max(H + w0, w1 + H) + w1 + H, 12);
        expect(hostSegments(timeline, 'host → device')).toHaveLength(M);
      }
      executor.destroy();
    }
  });

  it('refuses ReplicaAndLadder at compile, saying why the simulated engine cannot model it', async () => {
    const options = new Options().deviceIterations(M).replicationFactor(2).syncPattern(SyncPattern.ReplicaAndLadder);
    const executor = inferenceModel(twoStageModel(), { options });
    const compiling = executor.compile(tf.ones([2 * M * MICRO_BATCH, FEATURES]));
    await expect(compiling).rejects.toThrow(PoptfjsError);
    await expect(compiling).rejects.toThrow(
      'syncPattern(ReplicaAndLadder) cannot be modelled by the simulated engine: it lets groups of IPUs (replicas) meet the host without ' +
        "synchronising with each other while the IPUs within a replica still synchronise together (Poplar syncConfiguration 'intraReplicaAndLadder'), " +
        'but the simulated replicas already move their host data independently and run the same timeline at the same time, so it would change nothing; ' +
        'use SyncPattern.Full, or SyncPattern.SinglePipeline to let each IPU meet the host on its own',
    );
    executor.destroy();
  });
});
