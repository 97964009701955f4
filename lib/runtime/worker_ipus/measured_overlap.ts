/**
 * How much the worker IPUs of the last call actually ran at the same time:
 * wall-clock numbers measured on the host (not computed from the cost
 * model), to read next to the simulated timeline's utilization.
 */

/** What one worker IPU did during the last call. */
export interface MeasuredIpuTime {
  /** The IPU (within a replica). */
  readonly ipu: number;
  /**
   * Milliseconds the worker spent on its work items, from receiving each to
   * posting its reply: wall-clock time, so with more worker IPUs than cores
   * it includes time the thread waited for a core (and the overlap can then
   * exceed the number of cores).
   */
  readonly busyMs: number;
  /** Of those, milliseconds running nodes (the rest unpacks and packs the data that crossed threads). */
  readonly computeMs: number;
  /** Work items it ran. */
  readonly workItems: number;
}

/** The measured concurrency of the worker IPUs over the last call. */
export interface MeasuredOverlap {
  /** Wall-clock milliseconds of the call, on the main thread. */
  readonly wallMs: number;
  /** Per worker IPU. */
  readonly ipus: readonly MeasuredIpuTime[];
  /** Sum of the IPUs' busy time over the wall time: 1 is one IPU's worth of work at a time, up to the number of IPUs. */
  readonly overlap: number;
  /** Milliseconds the main thread spent packing data for the workers and unpacking their replies. */
  readonly mainTransferMs: number;
  /** Bytes of tensor data posted to the workers. */
  readonly bytesToWorkers: number;
  /** Bytes of tensor data posted back by the workers. */
  readonly bytesFromWorkers: number;
}

/** Collects the measurements of one call, from its start to its end. */
export class OverlapMeasurement {
  private readonly ipus = new Map<number, { busyMs: number; computeMs: number; workItems: number }>();
  private started = performance.now();
  private mainTransferMs = 0;
  private bytesToWorkers = 0;
  private bytesFromWorkers = 0;

  /** Starts measuring a call (forgets the previous one). */
  begin(): void {
    this.ipus.clear();
    this.started = performance.now();
    this.mainTransferMs = 0;
    this.bytesToWorkers = 0;
    this.bytesFromWorkers = 0;
  }

  /** Adds a work item a worker reported. */
  workItem(ipu: number, busyMs: number, computeMs: number, bytesBack: number): void {
    const entry = this.ipus.get(ipu) ?? { busyMs: 0, computeMs: 0, workItems: 0 };
    entry.busyMs += busyMs;
    entry.computeMs += computeMs;
    entry.workItems++;
    this.ipus.set(ipu, entry);
    this.bytesFromWorkers += bytesBack;
  }

  /** Adds main-thread time spent packing or unpacking, and the bytes posted. */
  mainTransfer(ms: number, bytesOut = 0): void {
    this.mainTransferMs += ms;
    this.bytesToWorkers += bytesOut;
  }

  /** The measurements since {@link OverlapMeasurement.begin}, the call ending now. */
  end(): MeasuredOverlap {
    const wallMs = performance.now() - this.started;
    const ipus = [...this.ipus].sort(([a], [b]) => a - b).map(([ipu, e]) => ({ ipu, ...e }));
    const busy = ipus.reduce((sum, e) => sum + e.busyMs, 0);
    return {
      wallMs,
      ipus,
      overlap: wallMs > 0 ? busy / wallMs : 0,
      mainTransferMs: this.mainTransferMs,
      bytesToWorkers: this.bytesToWorkers,
      bytesFromWorkers: this.bytesFromWorkers,
    };
  }
}
