/**
 * Where the trace of the engine option `debug.trace` goes, as Poplar sends
 * it: to the error stream (stderr) line by line as the device runs, or, with
 * `debug.traceFile`, to that file instead. The file holds the trace of every
 * run since the engine was loaded; it is rewritten atomically after each run
 * (atomic_file.ts), so a crash leaves the trace of the runs that completed.
 */
import { writeFileAtomic } from '../files/atomic_file.js';

/** The trace of a loaded engine. */
export class TraceOutput {
  private readonly lines: string[] = [];
  /** How many lines the file holds. */
  private written = 0;

  /** A trace to `file`, or to stderr when there is none. */
  constructor(private readonly file: string | undefined) {}

  /** Traces one line. */
  line(text: string): void {
    if (this.file === undefined) process.stderr.write(`${text}\n`);
    else this.lines.push(text);
  }

  /** Ends a run (completed or failed): the trace file, if any, is rewritten with every line so far. */
  endRun(): void {
    if (this.file === undefined || this.lines.length === this.written) return;
    writeFileAtomic(this.file, new TextEncoder().encode(`${this.lines.join('\n')}\n`));
    this.written = this.lines.length;
  }
}
