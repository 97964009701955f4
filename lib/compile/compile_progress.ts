/**
 * Compile progress, as Poplar's `ProgressFunc`: a callback told `(done,
 * total)` after each compile step, and a progress bar drawn on stderr when
 * `Options.showCompilationProgressBar` is on.
 */

/**
 * A progress callback: `done` steps of `total`; `detail`, when given, says
 * how far the step after them has come (e.g. `12000 kernels traced`).
 */
export type ProgressCallback = (done: number, total: number, detail?: string) => void;

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
export const COMPILE_GRAPH_STEPS = COMPILE_STEPS.slice(1, -1);

/** The steps of a plan (`plan()`): the model built with shapes only, then a compile's steps up to its memory and time. */
export const PLAN_STEPS = ['build', 'trace', 'patterns', 'placement', 'schedule', 'memory and time'] as const;

/**
 * A progress bar on stderr: `Graph compilation: [#####.....] 3/6 placement`,
 * or with a detail of the running step, `Planning: [#####.....] 1/6 trace:
 * 12000 kernels traced`. `title` and `steps` name what progresses.
 */
export function progressBar(stream: NodeJS.WriteStream = process.stderr, title = 'Graph compilation', steps: readonly string[] = COMPILE_STEPS): ProgressCallback {
  return (done, total, detail) => {
    const width = 30;
    const filled = Math.round((width * done) / total);
    const step = detail === undefined ? (steps[done - 1] ?? '') : `${steps[done] ?? ''}: ${detail}`;
    stream.write(`\r${title}: [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${step.padEnd(32)}`);
    if (done === total) stream.write('\n');
  };
}

/** Reports each compile step (or each of other `steps`, see {@link CompileProgress.over}) to every callback given. */
export class CompileProgress {
  private done = 0;
  private readonly callbacks: ProgressCallback[];
  private steps: readonly string[] = COMPILE_STEPS;

  constructor(...callbacks: Array<ProgressCallback | undefined>) {
    this.callbacks = callbacks.filter((c): c is ProgressCallback => c !== undefined);
  }

  /** Progress over `steps` (e.g. {@link PLAN_STEPS}) instead of a compile's. */
  static over(steps: readonly string[], ...callbacks: Array<ProgressCallback | undefined>): CompileProgress {
    const progress = new CompileProgress(...callbacks);
    progress.steps = steps;
    return progress;
  }

  /** The progress of `compileGraph` alone, told to `callback` as Poplar's `ProgressFunc` (`done` of its own steps). */
  static ofCompileGraph(callback: ProgressCallback | undefined): CompileProgress {
    return CompileProgress.over(COMPILE_GRAPH_STEPS, callback);
  }

  /** Marks the next step done. */
  step(): void {
    this.done++;
    for (const callback of this.callbacks) callback(this.done, this.steps.length);
  }

  /** Says how far the running step has come, e.g. `12000 kernels traced`. */
  detail(text: string): void {
    for (const callback of this.callbacks) callback(this.done, this.steps.length, text);
  }
}
