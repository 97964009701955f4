/**
 * Measuring cases side by side: the cases take turns within each round, so
 * they see the same machine state, and each case reports its median.
 */

/** A case: one step of work, timed from start to a synchronous result. */
export interface BenchCase {
  /** The case's row name in the table. */
  readonly name: string;
  /**
   * The most rounds this case steps in (the first ones), for cases too slow
   * to run every round; every round when absent.
   */
  readonly rounds?: number;
  /**
   * Runs one step. A step that measures itself (work in another process)
   * returns its time in milliseconds; otherwise the call is timed.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: steps are written as `async () => { ... }` or `() => ...`, whose void results this accepts.
  step(): Promise<number | void> | number | void;
}

/** The median step time of a case, in milliseconds. */
export interface BenchResult {
  /** The case's name. */
  readonly name: string;
  /** The median of its timed steps. */
  readonly medianMs: number;
  /** How many steps were timed. */
  readonly samples: number;
}

/** The median of `values` (the mean of the middle two when their count is even). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function timedStep(c: BenchCase): Promise<number> {
  const start = performance.now();
  const reported = await c.step();
  return typeof reported === 'number' ? reported : performance.now() - start;
}

/**
 * Runs `warmup` untimed rounds, then `rounds` timed rounds in which every case
 * steps once, in turn (a case with fewer `rounds` of its own sits out the
 * last ones). With `rotate`, each round starts one case later than the one
 * before, so that no case always follows the same other.
 */
export async function runSideBySide(cases: readonly BenchCase[], rounds: number, warmup = 3, rotate = false): Promise<BenchResult[]> {
  const limit = (c: BenchCase) => Math.min(rounds, c.rounds ?? rounds);
  for (let i = 0; i < warmup; i++) for (const c of cases) if (limit(c) > 0) await c.step();
  const times = cases.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < cases.length; k++) {
      const i = rotate ? (r + k) % cases.length : k;
      if (r < limit(cases[i]!)) times[i]!.push(await timedStep(cases[i]!));
    }
  }
  return cases.map((c, i) => ({ name: c.name, medianMs: median(times[i]!), samples: times[i]!.length }));
}

/** A table of results with each case's ratio to the baseline (the first case). */
export function formatResults(title: string, results: readonly BenchResult[]): string {
  const baseline = results[0]!.medianMs;
  const width = Math.max(...results.map((r) => r.name.length), 4);
  const lines = [title, `${'case'.padEnd(width)}  median ms  samples  ratio to ${results[0]!.name}`];
  for (const r of results) {
    lines.push(`${r.name.padEnd(width)}  ${r.medianMs.toFixed(2).padStart(9)}  ${String(r.samples).padStart(7)}  ${(r.medianMs / baseline).toFixed(3).padStart(8)}`);
  }
  return lines.join('\n');
}
