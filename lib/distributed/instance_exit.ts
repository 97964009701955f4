/**
 * How an instance of `poptfjs run` ended: the instance runner reports it to
 * the launcher over its connection (see `instance_channel.ts`), so the
 * launcher learns which instance ended and how on any host.
 */
import { constants } from 'node:os';

/** How one instance's command ended. */
export interface InstanceExit {
  /** The instance's index. */
  readonly instance: number;
  /** Its exit code, or `null` when a signal ended it or it could not start. */
  readonly code: number | null;
  /** The signal that ended it, or `null`. */
  readonly signal: NodeJS.Signals | null;
  /** The command that could not be started and why, when it could not: `train.js (spawn train.js EACCES)`. */
  readonly startError?: string;
}

/** Whether the instance failed: it could not start, was ended by a signal, or exited with a code other than 0. */
export function instanceFailed(exit: InstanceExit): boolean {
  return exit.code !== 0;
}

/** 'instance 1 exited with code 3', 'instance 1 was killed by signal SIGKILL', 'instance 1 could not start ...'. */
export function describeInstanceExit(exit: InstanceExit): string {
  if (exit.startError !== undefined) return `instance ${exit.instance} could not start ${exit.startError}`;
  if (exit.signal !== null) return `instance ${exit.instance} was killed by signal ${exit.signal}`;
  return `instance ${exit.instance} exited with code ${exit.code}`;
}

/** The exit status a shell would give: the code, 128 + the signal's number, or 127 for a command that could not start. */
export function exitStatus(exit: InstanceExit): number {
  if (exit.startError !== undefined) return 127;
  if (exit.signal !== null) return 128 + (constants.signals[exit.signal] ?? 0);
  return exit.code ?? 1;
}
