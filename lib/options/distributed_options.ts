/**
 * `opts.Distributed`: the process layout of a run distributed over several
 * host processes (PopTorch's `_DistributedOptions`).
 */
import { checkArgument, nonNegativeInteger, positiveInteger } from './argument_rules.js';
import type { MutationGuard } from './frozen_options.js';

/** The distributed options as plain data. */
export interface DistributedSettings {
  /** The id of this process, from 0 (default 0). */
  readonly processId: number;
  /** How many processes the run is distributed over (default 1). */
  readonly numProcesses: number;
}

/** The defaults of {@link DistributedSettings}: a single process. */
const DEFAULT_DISTRIBUTED_SETTINGS: DistributedSettings = Object.freeze({ processId: 0, numProcesses: 1 });

/**
 * The process layout of a distributed run; reach it as `opts.Distributed`.
 * Every setter returns the group. Stored and reported; has no effect on the
 * simulated engine yet.
 */
export class DistributedOptions {
  #values: DistributedSettings = DEFAULT_DISTRIBUTED_SETTINGS;
  readonly #guard: MutationGuard;

  /** @internal `Options` builds its groups; `guard` throws when the options are frozen. */
  constructor(guard: MutationGuard) {
    this.#guard = guard;
  }

  /**
   * Sets this process's id (from 0 to `numProcesses - 1`) and the number of
   * processes the run is distributed over. Stored and reported; has no effect
   * on the simulated engine yet.
   */
  configureProcessId(processId: number, numProcesses: number): this {
    const where = this.#check('configureProcessId');
    const count = checkArgument(positiveInteger, numProcesses, `${where}: numProcesses`);
    const id = checkArgument(nonNegativeInteger, processId, `${where}: processId`);
    if (id >= count) {
      throw new RangeError(`${where}: processId must be less than numProcesses (${count}), got ${id}`);
    }
    this.#values = { processId: id, numProcesses: count };
    return this;
  }

  /** Runs as a single process again (process 0 of 1). */
  disable(): this {
    this.#check('disable');
    this.#values = DEFAULT_DISTRIBUTED_SETTINGS;
    return this;
  }

  /** The id of this process. */
  get processId(): number {
    return this.#values.processId;
  }

  /** How many processes the run is distributed over. */
  get numProcesses(): number {
    return this.#values.numProcesses;
  }

  /** A copy of the current values. */
  get settings(): DistributedSettings {
    return { ...this.#values };
  }

  /** @internal Replaces every value; `Options` uses it to copy options. */
  restore(values: DistributedSettings): void {
    this.#values = { ...values };
  }

  #check(method: string): string {
    const where = `Options.Distributed.${method}`;
    this.#guard(where);
    return where;
  }
}
