/**
 * `opts.Distributed`: the process layout of a run distributed over several
 * host processes (PopTorch's `_DistributedOptions`).
 */
import { checkArgument, nonEmptyString, nonNegativeInteger, positiveInteger } from '../option_vocabulary/argument_rules.js';
import type { MutationGuard } from '../option_vocabulary/frozen_options.js';

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
 * Every setter returns the group. The `DataLoader` gives each process its
 * share of every global batch by it. As in PopTorch, new options read Open
 * MPI's `OMPI_COMM_WORLD_SIZE` and `OMPI_COMM_WORLD_RANK` (see
 * {@link DistributedOptions.setEnvVarNames}); under `poptfjs run`, take the
 * options from `popdist.Options()` instead, which set the layout with any MPI.
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
   * processes the run is distributed over, for a program started by a
   * launcher of its own (`poptfjs run` programs use `popdist.Options()`).
   * `replicationFactor` stays the replicas of this process.
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

  /**
   * Reads this process's id from the environment variable `varProcessId` and
   * the number of processes from `varNumProcesses`, as PopTorch does for
   * launchers such as `mpirun` (MPICH's are `PMI_SIZE` and `PMI_RANK`, Open
   * MPI's `OMPI_COMM_WORLD_SIZE` and `OMPI_COMM_WORLD_RANK`, which new
   * options read). A variable that is not set counts as id 0 or 1 process;
   * a value that is not such a number, or an id not below the number, is a
   * `RangeError` naming the variable.
   */
  setEnvVarNames(varNumProcesses: string, varProcessId: string): this {
    const where = this.#check('setEnvVarNames');
    const countVariable = checkArgument(nonEmptyString, varNumProcesses, `${where}: varNumProcesses`);
    const idVariable = checkArgument(nonEmptyString, varProcessId, `${where}: varProcessId`);
    const read = (name: string, least: number, otherwise: number): number => {
      const text = process.env[name];
      if (text === undefined) return otherwise;
      if (!/^\d+$/.test(text) || Number(text) < least) throw new RangeError(`${where}: ${name} must be an integer of at least ${least}, got '${text}'`);
      return Number(text);
    };
    const count = read(countVariable, 1, 1);
    const id = read(idVariable, 0, 0);
    if (id >= count) throw new RangeError(`${where}: ${idVariable} (${id}) must be less than ${countVariable} (${count})`);
    this.#values = { processId: id, numProcesses: count };
    return this;
  }

  /** Runs as a single process again (process 0 of 1), whatever the environment or earlier calls said. */
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
