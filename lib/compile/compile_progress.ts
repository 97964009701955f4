/**
 * Compile progress, as Poplar's `ProgressFunc`: a callback told `(done,
 * total)` after each compile step, and a progress bar drawn on stderr when
 * `Options.showCompilationProgressBar` is on.
 */

/** A progress callback: `done` steps of `total`. */
export type ProgressCallback = (done: number, total: number) => void;

/** Options of `executor.compile(...inputs, options)`. */
export interface CompileOptions {
  /** Told `(done, total)` after each compile step. */
  readonly progress?: ProgressCallback;
}

/** The keys of {@link CompileOptions}: a last argument of `compile` with only these keys (and no tensor) is the options. */
export const COMPILE_OPTION_KEYS: ReadonlyArray<keyof CompileOptions> = ['progress'];

/** The steps of a compile. */
export const COMPILE_STEPS = ['trace', 'patterns', 'placement', 'schedule', 'memory and time', 'load'] as const;

/** The steps `compileGraph` itself takes (those between the trace and the load). */
export const COMPILE_GRAPH_STEPS = COMPILE_STEPS.indexOf('load') - COMPILE_STEPS.indexOf('trace') - 1;

/** A progress bar on stderr: `Graph compilation: [#####.....] 3/6 placement`. */
export function progressBar(stream: NodeJS.WriteStream = process.stderr): ProgressCallback {
  return (done, total) => {
    const width = 30;
    const filled = Math.round((width * done) / total);
    const step = COMPILE_STEPS[done - 1] ?? '';
    stream.write(`\rGraph compilation: [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${step.padEnd(16)}`);
    if (done === total) stream.write('\n');
  };
}

/** Reports each compile step to every callback given. */
export class CompileProgress {
  private done = 0;
  private readonly callbacks: ProgressCallback[];
  /** The steps counted: a whole compile's, or `compileGraph`'s alone. */
  private total: number = COMPILE_STEPS.length;

  constructor(...callbacks: Array<ProgressCallback | undefined>) {
    this.callbacks = callbacks.filter((c): c is ProgressCallback => c !== undefined);
  }

  /** The progress of `compileGraph` alone, told to `callback` as Poplar's `ProgressFunc` (`done` of its own steps). */
  static ofCompileGraph(callback: ProgressCallback | undefined): CompileProgress {
    const progress = new CompileProgress(callback);
    progress.total = COMPILE_GRAPH_STEPS;
    return progress;
  }

  /** Marks the next step done. */
  step(): void {
    this.done++;
    for (const callback of this.callbacks) callback(this.done, this.total);
  }
}
