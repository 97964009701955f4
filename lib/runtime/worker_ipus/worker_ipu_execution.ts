/**
 * Running an executable's simulated IPUs on worker threads
 * (`Options.parallelIpus(true)`): decides whether the executable can (more
 * than one IPU runs nodes, and worker IPUs give the same numbers), starts the
 * worker threads on the first call, runs each replica's schedule on them, and
 * measures the overlap they achieved.
 *
 * An executable that cannot, or whose threads fail to start, runs in-process,
 * with one WARN saying why.
 */
import * as tf from '@tensorflow/tfjs';
import { getLogger } from '../../common/log.js';
import type { Executable } from '../../executable/executable.js';
import type { RandomSource } from '../../executable/random_source.js';
import { inProcessReason } from './in_process_reason.js';
import { OverlapMeasurement, type MeasuredOverlap } from './measured_overlap.js';
import { UnitDataflow } from './unit_dataflow.js';
import { WorkerIpuPool } from './worker_ipu_pool.js';
import { plannedItems, WorkerScheduleRun, type PlannedItem, type ScheduleHooks, type WorkerRunContext } from './worker_schedule_run.js';

const log = getLogger('devicex');

/** The worker IPUs of one loaded executable. */
export class WorkerIpuExecution {
  private pool: WorkerIpuPool | undefined;
  /** Why the threads could not start: the executable runs in-process from then on. */
  private unavailable: string | undefined;
  private readonly keys = new WeakMap<object, number>();
  private nextKey = 1;
  private readonly measurement = new OverlapMeasurement();
  private last: MeasuredOverlap | undefined;
  private readonly items: readonly PlannedItem[];

  private constructor(
    private readonly executable: Executable,
    private readonly dataflow: UnitDataflow,
    private readonly random: RandomSource,
  ) {
    this.items = plannedItems(executable.schedule, dataflow);
  }

  /**
   * The worker IPUs of `executable` if `parallelIpus` is on and they can run
   * it; undefined if it runs in-process (a WARN says why when worker IPUs
   * cannot give the same numbers).
   */
  static forExecutable(executable: Executable, random: RandomSource, parallelIpus: boolean): WorkerIpuExecution | undefined {
    if (!parallelIpus) return undefined;
    const dataflow = new UnitDataflow(executable.graph, executable.placement);
    if (dataflow.ipus.length < 2) {
      log.debug(`parallelIpus: '${executable.modelName}' runs nodes on ${dataflow.ipus.length} IPU; it runs in-process`);
      return undefined;
    }
    const reason = inProcessReason(executable, dataflow);
    if (reason) {
      log.warn(`parallelIpus: '${executable.modelName}' runs its IPUs in-process, one after another: ${reason}`);
      return undefined;
    }
    return new WorkerIpuExecution(executable, dataflow, random);
  }

  /** The IPUs that get a worker thread. */
  get ipus(): readonly number[] {
    return this.dataflow.ipus;
  }

  /**
   * Starts the worker threads unless they run (blocking until they are
   * ready); false if they cannot start, after which the executable runs
   * in-process (warned once).
   */
  ready(): boolean {
    if (this.unavailable !== undefined) return false;
    if (this.pool) return true;
    let pool: WorkerIpuPool | undefined;
    try {
      pool = new WorkerIpuPool(this.executable, this.dataflow, tf.getBackend());
      pool.waitUntilReady();
      this.pool = pool;
      log.debug(() => `parallelIpus: started worker threads for IPUs ${this.dataflow.ipus.join(', ')} of '${this.executable.modelName}'`);
      return true;
    } catch (error) {
      pool?.terminate();
      this.unavailable = error instanceof Error ? error.message : String(error);
      log.warn(`parallelIpus: the worker IPUs of '${this.executable.modelName}' could not start, so it runs in-process: ${this.unavailable}`);
      return false;
    }
  }

  /** Starts measuring a call. */
  beginCall(): void {
    this.measurement.begin();
  }

  /** Ends the call's measurement. */
  endCall(): void {
    this.last = this.measurement.end();
  }

  /** Runs one replica's schedule on the workers (after {@link WorkerIpuExecution.ready} returned true). */
  runSchedule(replica: number, hooks: ScheduleHooks): void {
    new WorkerScheduleRun(this.context(), replica, hooks).run();
  }

  private context(): WorkerRunContext {
    return {
      pool: this.pool!,
      dataflow: this.dataflow,
      items: this.items,
      graph: this.executable.graph,
      placement: this.executable.placement,
      random: this.random,
      measurement: this.measurement,
      keyOf: (t) => this.keyOf(t),
      stopPool: () => this.stop(),
    };
  }

  private keyOf(t: tf.Tensor): number {
    let key = this.keys.get(t.dataId);
    if (key === undefined) this.keys.set(t.dataId, (key = this.nextKey++));
    return key;
  }

  /** What the workers measured over the last call that ran on them. */
  measuredOverlap(): MeasuredOverlap | undefined {
    return this.last;
  }

  /** Ends the worker threads; the next call starts new ones. */
  stop(): void {
    this.pool?.terminate();
    this.pool = undefined;
  }
}
