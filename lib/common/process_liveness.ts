/**
 * Whether a process recorded in a lock file still runs. A pid alone can
 * mislead: a killed process that its parent has not reaped yet (a zombie)
 * answers signals, and a pid can be reused by a new process. On Linux,
 * `/proc/<pid>/stat` tells both: the state (`Z` for a zombie) and the start
 * time, which a lock records next to the pid.
 */
import { readFileSync } from 'node:fs';

/** The state and start time (in clock ticks since boot) of process `pid`, from `/proc`; undefined where there is no `/proc` or no such process. */
function procStat(pid: number): { state: string; start: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (command) state ppid ...": the command may hold spaces and parentheses; the start time is field 22.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', start: fields[19] ?? '' };
}

/** The start time of this process as {@link processRuns} compares it, or null where it cannot be known. */
export function ownStartTime(): string | null {
  return procStat(process.pid)?.start ?? null;
}

/**
 * True if process `pid` runs and is not a zombie; with `startTime` (as
 * {@link ownStartTime} gave it in that process), only if it is the same
 * process and not a later one given the same pid.
 */
export function processRuns(pid: number, startTime?: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(pid);
  if (stat === undefined) return true;
  if (stat.state === 'Z') return false;
  return startTime === undefined || startTime === null || stat.start === startTime;
}
