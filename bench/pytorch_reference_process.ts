/**
 * PyTorch as a peer in the benchmark tables: `bench/pytorch_reference.py`
 * runs in a Python subprocess (Debian's `/usr/bin/python3` with
 * `python3-torch`, or `POPTFJS_BENCH_PYTHON`), serving one training step per
 * request, so its cases take turns with the tfjs cases in the same rounds.
 * Each step is timed in Python (no IPC in the numbers); while it runs, this
 * process waits. When Python or torch is missing, the reference is skipped
 * with a note.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { benchDirectory } from './bench_directory.js';
import type { BenchCase } from './side_by_side.js';

/** The training steps the Python script serves. */
export type PyTorchStep = 'mlp' | 'cnn';

/** What the script says about itself. */
interface PyTorchInfo {
  readonly torch: string;
  readonly threads: number;
  readonly python: string;
}

/** The interpreter the reference runs on. */
const PYTHON = process.env.POPTFJS_BENCH_PYTHON ?? '/usr/bin/python3';

/** A running PyTorch reference process. */
export class PyTorchReference {
  private readonly pending: Array<(line: string) => void> = [];

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly lines: Interface,
    /** Versions and threads, as the script reports them. */
    readonly info: PyTorchInfo,
  ) {
    lines.on('line', (line) => this.pending.shift()?.(line));
  }

  /** Starts the script, or says why PyTorch cannot be measured here. */
  static async start(): Promise<PyTorchReference | { readonly skipped: string }> {
    const script = join(benchDirectory(), 'pytorch_reference.py');
    if (!existsSync(PYTHON)) return { skipped: `${PYTHON} not found (set POPTFJS_BENCH_PYTHON to a Python with torch)` };
    const child = spawn(PYTHON, [script, '--serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: child.stdout });
    const first = await new Promise<string | undefined>((resolve) => {
      lines.once('line', resolve);
      child.once('exit', () => resolve(undefined));
      child.once('error', () => resolve(undefined));
    });
    if (first === undefined) {
      const reason = stderr.trim().split('\n').pop() ?? 'no output';
      return { skipped: `${PYTHON} ${script} did not start (${reason})` };
    }
    return new PyTorchReference(child, lines, JSON.parse(first) as PyTorchInfo);
  }

  /** The case name of the reference in the tables, e.g. `PyTorch 1.13.0 (1 thread)`. */
  get caseName(): string {
    return `PyTorch ${this.info.torch} (${this.info.threads} thread${this.info.threads === 1 ? '' : 's'})`;
  }

  /** A case that runs one PyTorch training step `step` per call and reports its time. */
  stepCase(step: PyTorchStep): BenchCase {
    return { name: this.caseName, step: () => this.request(step) };
  }

  /** Stops the process. */
  close(): void {
    this.lines.close();
    this.child.stdin.end();
    this.child.kill();
  }

  private request(step: PyTorchStep): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending.push((line) => {
        const ms = Number(line);
        if (Number.isFinite(ms)) resolve(ms);
        else reject(new Error(`pytorch_reference.py answered '${line}' to '${step}'`));
      });
      this.child.stdin.write(`${step}\n`);
    });
  }
}
