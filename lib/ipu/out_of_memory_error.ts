/**
 * The compile error of a model that does not fit on its IPUs.
 */
import { PoptfjsError } from '../common/errors.js';
import { formatBytes } from './byte_size.js';
import type { IpuMemoryUse, MemoryPlan } from './memory_plan.js';

/** What can make a model fit, given what overflows. */
function remedies(over: IpuMemoryUse, microBatch: number, ipusUsed: number): string[] {
  const { byKind } = over;
  const advice: string[] = [];
  advice.push(`split the model over more IPUs with Block/BeginBlock annotations and pipelining (it uses ${ipusUsed} now)`);
  if (byKind['optimizer state'] > 0) {
    advice.push(
      'keep the optimizer state off chip or shard it over the replicas (Options.TensorLocations.setOptimizerLocation(new TensorLocationSettings().useOnChipStorage(false).useReplicatedTensorSharding(true)))',
    );
  }
  if (byKind.weights + byKind['optimizer state'] > byKind.activations) {
    advice.push("use SerialPhasedExecution with Liveness.OffChipAfterEachPhase, so only one phase's weights are on chip at a time");
  }
  if (byKind.activations > 0) {
    const stash = over.peak.stashed > 0 ? ` (${formatBytes(over.peak.stashed)} of it is the stash of ${over.peak.microBatchesInFlight} micro-batch(es) in flight)` : '';
    advice.push(
      `recompute activations${stash} (opts.autoRecomputation(RecomputationType.Standard)) or keep them off chip (Options.TensorLocations.setActivationLocation), ` +
        `or use a smaller micro-batch (it is ${microBatch} now)`,
    );
  }
  if (byKind.temporary > 0) advice.push('lower the available memory proportion for temporary memory (Options.setAvailableMemoryProportion)');
  return advice;
}

/** A model that does not fit: which IPU, by how much, its largest items and what would help. */
export class OutOfMemoryError extends PoptfjsError {
  /** The first IPU that overflows. */
  readonly ipu: number;
  /** Bytes over its capacity. */
  readonly bytesOver: number;
  /** The memory plan, for reports. */
  readonly plan: MemoryPlan;

  /**
   * @param plan the memory plan of the model's IPUs
   * @param microBatch the micro-batch it was planned for
   * @param model the model's name
   */
  constructor(plan: MemoryPlan, microBatch: number, model: string) {
    const over = plan.ipus.find((m) => m.used > m.capacity) ?? plan.ipus.find((m) => m.ioTiles && m.ioTiles.hostBuffers > m.ioTiles.capacity)!;
    if (over.used <= over.capacity && over.ioTiles) {
      const io = over.ioTiles;
      super(
        `IPU ${over.ipu} is out of I/O tile memory compiling model '${model}' at micro-batch ${microBatch}: the buffers of the host transfers that overlap compute ` +
          `(two micro-batches of each input and output marked with ops.setOverlapForInput / setOverlapForOutput) need ${formatBytes(io.hostBuffers)} of its I/O tiles' ${formatBytes(io.capacity)} ` +
          `(${formatBytes(io.hostBuffers - io.capacity)} over). What would help: reserve more I/O tiles (Options.TensorLocations.numIOTiles), use a smaller micro-batch (it is ${microBatch} now), ` +
          'or mark fewer inputs and outputs for overlap. Options.allowOutOfMemory(true) compiles anyway, for the report.',
        { type: 'out_of_memory', location: `IPU ${over.ipu}` },
      );
      this.ipu = over.ipu;
      this.bytesOver = io.hostBuffers - io.capacity;
      this.plan = plan;
      return;
    }
    const largest = over.items
      .slice(0, 5)
      .map((i) => `${i.kind} ${i.name.startsWith('live') || i.name.includes(' ') ? `(${i.name})` : `'${i.name}'`} ${formatBytes(i.bytes)}`);
    super(
      `IPU ${over.ipu} is out of memory compiling model '${model}' at micro-batch ${microBatch}: it needs ${formatBytes(over.used)} of its ${formatBytes(over.capacity)} ` +
        `(${formatBytes(over.used - over.capacity)} over). Largest items: ${largest.join(', ')}. ` +
        `What would help: ${remedies(over, microBatch, plan.ipus.length).join('; ')}. ` +
        'Options.allowOutOfMemory(true) compiles anyway, for the report.',
      { type: 'out_of_memory', location: `IPU ${over.ipu}` },
    );
    this.ipu = over.ipu;
    this.bytesOver = over.used - over.capacity;
    this.plan = plan;
  }
}
