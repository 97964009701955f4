/**
 * The benchmarks' child processes, stopped when the benchmark process
 * exits: one exit listener serves them all (a listener per child passed
 * Node's limit of ten with the thread benchmark's nine processes).
 */
import type { ChildProcess } from 'node:child_process';

const running = new Set<ChildProcess>();
let listening = false;

/** Sends `child` SIGTERM if it still runs when this process exits. */
export function stopOnExit(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (listening) return;
  listening = true;
  process.on('exit', () => {
    for (const c of running) c.kill('SIGTERM');
  });
}
