/**
 * `Options.TensorLocations` acts on the simulated IPU: what lives off chip
 * leaves In-Processor memory for streaming memory and costs transfers on the
 * timeline; sharded optimizer state divides by the replicas; I/O tiles take
 * tiles from compute and let transfers overlap it.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it, vi } from 'vitest';
import { BeginBlock, GC200, Options, PipelinedExecution, TensorLocationSettings, optim, trainingModel, type HardwareAnalysis } from 'poptfjs';

const WIDTHS = [256, 512, 512, 256];

async function compile(configure: (o: Options) => void, replicas = 1): Promise<HardwareAnalysis> {
  const model = tf.sequential({
    layers: WIDTHS.slice(1).map((units, i) => tf.layers.dense({ units, useBias: false, inputShape: i === 0 ? [WIDTHS[0]!] : undefined, kernelInitializer: 'zeros' })),
  });
  model.layers.forEach((layer, i) => BeginBlock(layer, { ipuId: i === 0 ? 0 : 1 }));
  const o = new Options().setExecutionStrategy(PipelinedExecution()).replicationFactor(replicas);
  o.Training.gradientAccumulation(4);
  configure(o);
  const executor = trainingModel(model, { options: o, loss: 'meanSquaredError', optimizer: new optim.Adam(model, { lr: 1e-3 }) });
  await executor.compile(tf.zeros([4 * 4 * replicas, WIDTHS[0]!]), tf.zeros([4 * 4 * replicas, WIDTHS[3]!]));
  const { hardware } = executor.executable;
  executor.destroy();
  return hardware;
}

const streamingTime = (h: HardwareAnalysis, label?: string) =>
  h.timeline.segments.filter((s) => s.kind === 'streaming' && (label === undefined || s.label === label)).reduce((t, s) => t + s.end - s.start, 0);

describe('tensor locations', () => {
  it('keeps off-chip weights in streaming memory and loads them for every step that reads them', async () => {
    const onChip = await compile(() => {});
    const offChip = await compile((o) => o.TensorLocations.setWeightLocation(new TensorLocationSettings().useOnChipStorage(false)));
    const w = (i: number) => WIDTHS[i]! * WIDTHS[i + 1]! * 4;
    // IPU 1 holds layers 1 and 2 (one stage): both are loaded for each of its steps, so both are on chip at once.
    expect(offChip.memory.ipus[1]!.streaming.byKind.weights).toBe(w(1) + w(2));
    expect(offChip.memory.ipus[0]!.streaming.byKind.weights).toBe(w(0));
    expect(onChip.memory.ipus[0]!.streaming.bytes).toBe(0);
    // Through the compute tiles the loads stall compute: 16 GB/s of streaming memory per IPU.
    const loads = offChip.timeline.segments.filter((s) => s.kind === 'streaming' && s.ipu === 0 && s.label === 'load');
    expect(loads.length).toBeGreaterThan(0);
    for (const load of loads) expect(load.end - load.start).toBeCloseTo(w(0) / GC200.streamingMemoryBandwidth, 12);
    expect(offChip.timeline.duration).toBeGreaterThan(onChip.timeline.duration);
  });

  it('stashes off-chip activations in streaming memory between the passes', async () => {
    const onChip = await compile(() => {});
    const offChip = await compile((o) => o.TensorLocations.setActivationLocation(new TensorLocationSettings().useOnChipStorage(false)));
    expect(offChip.memory.ipus[0]!.peak.stashed).toBeLessThan(onChip.memory.ipus[0]!.peak.stashed);
    expect(offChip.memory.ipus[0]!.streaming.byKind.activations).toBeGreaterThan(0);
    expect(streamingTime(offChip)).toBeGreaterThan(0);
  });

  it('shards optimizer state over the replicas, and reduce-scatters the gradients instead of all-reducing them', async () => {
    const whole = await compile(() => {}, 2);
    const sharded = await compile((o) => o.TensorLocations.setOptimizerLocation(new TensorLocationSettings().useReplicatedTensorSharding(true)), 2);
    whole.memory.ipus.forEach((ipu, i) => expect(sharded.memory.ipus[i]!.byKind['optimizer state']).toBe(ipu.byKind['optimizer state'] / 2));
    expect(sharded.timeline.segments.some((s) => s.label === 'gradient reduce-scatter and weight all-gather')).toBe(true);
    // Tensors with no more elements than minElementsForReplicatedTensorSharding are not sharded.
    const small = await compile(
      (o) => o.TensorLocations.setOptimizerLocation(new TensorLocationSettings().useReplicatedTensorSharding(true).minElementsForReplicatedTensorSharding(1e6)),
      2,
    );
    expect(small.memory.ipus[0]!.byKind['optimizer state']).toBe(whole.memory.ipus[0]!.byKind['optimizer state']);
  });

  it('loads and stores off-chip optimizer state around the weight update', async () => {
    const offChip = await compile((o) => o.TensorLocations.setOptimizerLocation(new TensorLocationSettings().useOnChipStorage(false)));
    const state = (i: number) => WIDTHS[i]! * WIDTHS[i + 1]! * 8;
    expect(offChip.memory.ipus[1]!.streaming.byKind['optimizer state']).toBe(state(1) + state(2));
    expect(offChip.memory.ipus[1]!.byKind['optimizer state']).toBe(Math.max(state(1), state(2)));
    expect(streamingTime(offChip, 'optimizer state load')).toBeGreaterThan(0);
    expect(streamingTime(offChip, 'optimizer state store')).toBeGreaterThan(0);
  });

  it('reserves I/O tiles: less memory and compute for the model, transfers through them overlap compute', async () => {
    const plain = await compile((o) => o.TensorLocations.setWeightLocation(new TensorLocationSettings().useOnChipStorage(false)));
    const io = await compile((o) => {
      o.TensorLocations.numIOTiles(64);
      o.TensorLocations.setWeightLocation(new TensorLocationSettings().useOnChipStorage(false).useIOTilesToLoad(true));
    });
    expect(io.memory.ipus[0]!.capacity).toBe((GC200.tiles - 64) * GC200.memoryPerTile);
    expect(io.timeline.segments.filter((s) => s.kind === 'streaming' && s.label === 'load')).toEqual([]);
    expect(io.timeline.segments.some((s) => s.kind === 'streaming' && s.label === 'streaming')).toBe(true);
    expect(io.timeline.duration).toBeLessThan(plain.timeline.duration);
  });

  it('refuses what PopART does not support, naming the setting and what to do', async () => {
    await expect(compile((o) => o.TensorLocations.setWeightLocation(new TensorLocationSettings().useReplicatedTensorSharding(true)), 2)).rejects.toThrow(
      /setWeightLocation: sharded weights live off chip .* add useOnChipStorage\(false\)/,
    );
    await expect(compile((o) => o.TensorLocations.setActivationLocation(new TensorLocationSettings().useReplicatedTensorSharding(true)))).rejects.toThrow(
      /replicated tensor sharding applies to weights and optimizer state, not to activations/,
    );
  });

  it('without I/O tiles, loads and stores them through the compute tiles with a warning, as PopART does when numIOTiles is 0 (test_tensor_location)', async () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    const offChip = (o: Options) => o.TensorLocations.setWeightLocation(new TensorLocationSettings().useOnChipStorage(false));
    const compute = await compile(offChip);
    const ioFlags = await compile((o) => {
      o.TensorLocations.setWeightLocation(new TensorLocationSettings().useOnChipStorage(false).useIOTilesToLoad(true).useIOTilesToStore(true));
      // PopTorch's test_tensor_location: I/O tile flags with sharding off and on, none of them with numIOTiles.
      o.TensorLocations.setOptimizerLocation(new TensorLocationSettings().useIOTilesToLoad(false).useReplicatedTensorSharding(true).minElementsForReplicatedTensorSharding(4));
    });
    vi.restoreAllMocks();
    expect(ioFlags.memory.ipus[0]!.capacity).toBe(GC200.tiles * GC200.memoryPerTile);
    expect(ioFlags.timeline.duration).toBe(compute.timeline.duration);
    expect(streamingTime(ioFlags, 'load')).toBe(streamingTime(compute, 'load'));
    expect(lines.filter((l) => l.includes(' W: '))).toEqual([
      expect.stringContaining(
        'W: Options.TensorLocations.setWeightLocation: useIOTilesToLoad without I/O tiles: the weights go through the compute tiles, as PopART does when numIOTiles is 0',
      ),
      expect.stringContaining('W: Options.TensorLocations.setWeightLocation: useIOTilesToStore without I/O tiles'),
    ]);
  });
});
