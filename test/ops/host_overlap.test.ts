/**
 * `ops.setOverlapForInput` / `setOverlapForOutput` (PopTorch's
 * `set_overlap_for_input` / `set_overlap_for_output`, tests/overlapped_io_test.py):
 * marked inputs and outputs move on the I/O tiles while the compute tiles
 * work, their buffers held by the I/O tiles; PopTorch's errors for the rest.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, OutputMode, ShardedExecution, inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import type { Timeline } from '../../lib/ipu/timeline.js';
import { Messages, decodeMessage, encodeMessage } from '../../lib/proto/executable_proto.js';
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';

/** Micro-batches per call, samples per micro-batch, features per sample. */
const M = 8;
const MICRO_BATCH = 4;
const FEATURES = 1024;
/** A host link that moves one micro-batch's input (or output), 4 × 1024 float32 = 16384 bytes, in 10 µs. */
const MICRO_BATCH_BYTES = MICRO_BATCH * FEATURES * 4;
const HOST_LINK = MICRO_BATCH_BYTES / 10e-6;
const H = MICRO_BATCH_BYTES / HOST_LINK;
const TARGET = { ipuLinkBandwidth: 1e30, syncHopLatency: 0, hostLinkBandwidth: HOST_LINK };
const IO_TILES = 64;

/** A dense layer whose input and output are marked with `mode` (none: unmarked). */
function denseModel(mode?: ops.OverlapMode) {
  const layer = tf.layers.dense({ units: FEATURES, inputShape: [FEATURES], useBias: false, kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) });
  layer.apply(tf.zeros([1, FEATURES]));
  return (x: tf.Tensor) => {
    const input = mode ? ops.setOverlapForInput(x, mode) : x;
    const y = layer.apply(input) as tf.Tensor;
    return mode ? ops.setOverlapForOutput(y, mode) : y;
  };
}

function overlapOptions(): Options {
  const options = new Options().deviceIterations(M).ipuTarget(TARGET).setExecutionStrategy(ShardedExecution());
  options.TensorLocations.numIOTiles(IO_TILES);
  return options;
}

async function inference(mode?: ops.OverlapMode) {
  const executor = inferenceModel(denseModel(mode), { options: overlapOptions() });
  await executor.compile(tf.ones([M * MICRO_BATCH, FEATURES]));
  return executor;
}

/** Seconds the compute tiles work over the call: compute, exchange and tile syncs. */
function work(timeline: Timeline): number {
  const a = timeline.ipus[0]!;
  return a.compute + a.exchange + a.sync;
}

const segments = (timeline: Timeline, label: string) => timeline.segments.filter((s) => s.kind === 'host' && s.label === label);

describe('ops.setOverlapForInput / setOverlapForOutput on the simulated timeline', () => {
  it('unmarked, the transfers stall the compute tiles: M·H in, the M micro-batches, M·H out', async () => {
    const executor = await inference();
    const { timeline } = executor.executable.hardware;
    expect(timeline.duration).toBeCloseTo(M * H + work(timeline) + M * H, 12);
    expect(segments(timeline, 'host → device').map((s) => [s.start, s.end])).toEqual([[0, expect.closeTo(M * H, 12)]]);
    executor.destroy();
  });

  it('OverlapDeviceIterationLoop: the first input and last output wait; the other M-1 of each move alongside the M micro-batches', async () => {
    const plain = await inference();
    const executor = await inference(ops.OverlapMode.OverlapDeviceIterationLoop);
    const { timeline } = executor.executable.hardware;
    const w = work(timeline);
    // The same compute tiles' work: the mark changes only where the transfers go.
    expect(w).toBeCloseTo(work(plain.executable.hardware.timeline), 15);
    expect(timeline.duration).toBeCloseTo(H + Math.max(w, 2 * (M - 1) * H) + H, 12);
    // Here the host link is the bottleneck: the call lasts its 2·M transfers, 160 µs, the compute hidden under them.
    expect(w).toBeLessThan(2 * (M - 1) * H);
    expect(timeline.duration).toBeCloseTo(160e-6, 12);
    const [first] = segments(timeline, 'host → device (I/O tiles, first micro-batch)');
    const [alongside] = segments(timeline, 'host ⇄ device (I/O tiles, overlapping compute)');
    const [last] = segments(timeline, 'device → host (I/O tiles, last micro-batch)');
    expect([first!.start, first!.end]).toEqual([0, expect.closeTo(H, 15)]);
    expect([alongside!.start, alongside!.end - alongside!.start]).toEqual([expect.closeTo(H, 15), expect.closeTo(2 * (M - 1) * H, 12)]);
    expect(last!.end).toBeCloseTo(timeline.duration, 15);
    expect(Math.min(...timeline.segments.filter((s) => s.kind !== 'host').map((s) => s.start))).toBeCloseTo(H, 15);
    // The call is shorter by what the I/O tiles hide: 2·M·H + w - (2·H + max(w, 2·(M-1)·H)).
    expect(plain.executable.hardware.timeline.duration - timeline.duration).toBeCloseTo(2 * M * H + w - 2 * H - Math.max(w, 2 * (M - 1) * H), 12);
    plain.destroy();
    executor.destroy();
  });

  it('OverlapAccumulationLoop in inference overlaps nothing: the accumulation loop has one micro-batch', async () => {
    const plain = await inference();
    const executor = await inference(ops.OverlapMode.OverlapAccumulationLoop);
    const { timeline } = executor.executable.hardware;
    expect(timeline.duration).toBeCloseTo(plain.executable.hardware.timeline.duration, 15);
    expect(segments(timeline, 'host → device (I/O tiles, first micro-batch)').map((s) => s.end - s.start)).toEqual([expect.closeTo(M * H, 12)]);
    plain.destroy();
    executor.destroy();
  });

  it('OverlapAccumulationLoop in training: each device iteration waits for its first micro-batch, then loads the others alongside', async () => {
    const D = 2;
    const GA = 4;
    const w = tf.variable(tf.randomNormal([FEATURES, FEATURES], 0, 0.01, 'float32', 3), true);
    const model = (x: tf.Tensor) => ops.identityLoss(tf.mean(tf.matMul(ops.setOverlapForInput(x, ops.OverlapMode.OverlapAccumulationLoop), w)), 'none');
    const options = overlapOptions().deviceIterations(D).outputMode(OutputMode.All);
    options.Training.gradientAccumulation(GA);
    const executor = trainingModel(model, { options, optimizer: new optim.SGD([w], { lr: 0.01 }) });
    await executor.compile(tf.ones([D * GA * MICRO_BATCH, FEATURES]));
    const { timeline } = executor.executable.hardware;
    const perIteration = work(timeline) / D;
    const update = timeline.ipus[0]!.collective / D;
    // The loss, 4 bytes a micro-batch, unmarked: after the call, through the compute tiles.
    const lossOut = segments(timeline, 'device → host');
    expect(lossOut.map((s) => s.end - s.start)).toEqual([expect.closeTo((D * GA * 4) / HOST_LINK, 15)]);
    expect(timeline.duration).toBeCloseTo(D * (H + Math.max(perIteration, (GA - 1) * H) + update) + (D * GA * 4) / HOST_LINK, 12);
    expect(segments(timeline, 'host → device (I/O tiles, first micro-batch)').map((s) => s.end - s.start)).toEqual([expect.closeTo(H, 15), expect.closeTo(H, 15)]);
    executor.destroy();
    w.dispose();
  });
});

describe('the I/O tiles hold the overlapped transfers, double-buffered', () => {
  it('two micro-batches of each marked input and output, in the I/O tiles of the IPU, and the marks in the summary report', async () => {
    const executor = await inference(ops.OverlapMode.OverlapDeviceIterationLoop);
    const { memory, spec } = executor.executable.hardware;
    expect(memory.ipus[0]!.ioTiles).toEqual({ capacity: IO_TILES * spec.memoryPerTile, hostBuffers: 2 * (MICRO_BATCH_BYTES + MICRO_BATCH_BYTES) });
    expect(memory.ipus[0]!.capacity).toBe((spec.tiles - IO_TILES) * spec.memoryPerTile);
    const report = executor.getSummaryReport();
    expect(report).toContain("IPU 0 I/O tiles (64): 64.0 KiB of 39.0 MiB hold overlapped host transfers' buffers (two micro-batches each)");
    expect(report).toContain('host I/O overlapping compute: input 0 (OverlapDeviceIterationLoop), output 0 (OverlapDeviceIterationLoop)');
    // The marks are kept in the executable's file.
    const { graph } = executor.executable;
    const read = graphFromMessage(decodeMessage(Messages.Graph, encodeMessage(Messages.Graph, graphMessage(graph)), 'graph'), 'graph');
    expect(read.roles.hostOverlap).toEqual([
      { of: 'input', index: 0, mode: 'OverlapDeviceIterationLoop' },
      { of: 'output', index: 0, mode: 'OverlapDeviceIterationLoop' },
    ]);
    executor.destroy();
  });

  it('refuses buffers larger than the I/O tiles, naming them and what would help', async () => {
    // 32 I/O tiles of 1 KiB hold 32 KiB; a doubled 16 KiB input and output take 64 KiB.
    const options = overlapOptions().ipuTarget({ ...TARGET, memoryPerTile: 1024 });
    options.TensorLocations.numIOTiles(32);
    const mode = ops.OverlapMode.OverlapDeviceIterationLoop;
    const executor = inferenceModel((x: tf.Tensor) => ops.setOverlapForOutput(tf.mul(ops.setOverlapForInput(x, mode), 2), mode), { options });
    await expect(executor.compile(tf.ones([M * MICRO_BATCH, FEATURES]))).rejects.toThrow(
      "IPU 0 is out of I/O tile memory compiling model 'anonymous function' at micro-batch 4: the buffers of the host transfers that overlap compute " +
        "(two micro-batches of each input and output marked with ops.setOverlapForInput / setOverlapForOutput) need 64.0 KiB of its I/O tiles' 32.0 KiB (32.0 KiB over). " +
        'What would help: reserve more I/O tiles (Options.TensorLocations.numIOTiles), use a smaller micro-batch (it is 4 now), or mark fewer inputs and outputs for overlap.',
    );
  });
});

describe("PopTorch's errors", () => {
  const compile = (fn: (x: tf.Tensor) => tf.Tensor | tf.Tensor[], options = overlapOptions()) => inferenceModel(fn, { options }).compile(tf.ones([M, 2]));
  const mode = ops.OverlapMode.OverlapAccumulationLoop;

  it('an input read before it is marked', async () => {
    await expect(compile((x) => [tf.add(x, 1), ops.setOverlapForInput(x, mode)])).rejects.toThrow(
      'poptorch.set_overlap_for_input must be the only op applied to an input. This is not the case for input 0 to the model.',
    );
  });

  it('a mark on what is no input, or no output', async () => {
    await expect(compile((x) => ops.setOverlapForInput(tf.add(x, 1), mode))).rejects.toThrow(
      'poptorch.set_overlap_for_input applied on a node which is not a tensor input to the model.',
    );
    await expect(compile((x) => tf.add(ops.setOverlapForOutput(x, mode), 1))).rejects.toThrow(
      'poptorch.set_overlap_for_output applied on a node which is not a tensor output to the model.',
    );
    await expect(
      compile((x) => {
        const y = tf.add(x, 1);
        return [y, ops.setOverlapForOutput(y, mode)];
      }),
    ).rejects.toThrow('poptorch.set_overlap_for_output cannot be used with a tensor that is returned twice.');
  });

  it('pipelining, no I/O tiles, an output mode other than All or Sum', async () => {
    const marked = (x: tf.Tensor) => tf.add(ops.setOverlapForInput(x, mode), 1);
    await expect(compile(marked, new Options().deviceIterations(M))).rejects.toThrow(
      'Overlapped IO is not supported with poptorch.PipelinedExecution. If you are using only one IPU, please switch to poptorch.ShardedExecution.',
    );
    await expect(compile(marked, new Options().deviceIterations(M).setExecutionStrategy(ShardedExecution()))).rejects.toThrow(
      'No IO tiles allocated. You must allocate at least 32 IO tiles using poptorch.Options().TensorLocations.numIOTiles.',
    );
    await expect(compile(marked, overlapOptions().outputMode(OutputMode.Final))).rejects.toThrow(
      'Unsupported output mode for overlapped IO. Please switch output mode to poptorch.OutputMode.All or poptorch.OutputMode.Sum. (the output mode is Final)',
    );
    // With I/O tiles and sharded execution the same model compiles, as in PopTorch's test.
    await expect(compile(marked)).resolves.toBeUndefined();
  });

  it('a mode that is no OverlapMode, and a value that is no tensor', () => {
    expect(() => ops.setOverlapForInput(tf.ones([1]), 'Overlap' as ops.OverlapMode)).toThrow(
      'setOverlapForInput: mode must be an OverlapMode (NoOverlap, OverlapAccumulationLoop or OverlapDeviceIterationLoop), got',
    );
    expect(() => ops.setOverlapForOutput([tf.ones([1]), 3] as never, mode)).toThrow('setOverlapForOutput: You may only set overlap for tensor outputs. 3 is not supported.');
  });
});
