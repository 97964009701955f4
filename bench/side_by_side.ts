/**
 * Measuring cases side by side: the cases take turns within each round, so
 * they see the same machine state, and each case reports its median.
 */

/** A case: one step of work, timed from start to a synchronous result. */
export interface BenchCase {
  readonly name: string;
  step(): Promise<void> | void;
}

/** The median step time of a case, in milliseconds. */
export interface BenchResult {
  readonly name: string;
  readonly medianMs: number;
  readonly samples: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs `warmup` untimed rounds, then `rounds` timed rounds in which every case steps once, in turn. */
export async function runSideBySide(cases: readonly BenchCase[], rounds: number, warmup = 3): Promise<BenchResult[]> {
  for (let i = 0; i < warmup; i++) for (const c of cases) await c.step();
  const times = cases.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < cases.length; i++) {
      const start = performance.now();
      await cases[i]!.step();
      times[i]!.push(performance.now() - start);
    }
  }
  return cases.map((c, i) => ({ name: c.name, medianMs: median(times[i]!), samples: rounds }));
}

/** A table of results with each case's ratio to the baseline (the first case). */
export function formatResults(title: string, results: readonly BenchResult[]): string {
  const baseline = results[0]!.medianMs;
  const width = Math.max(...results.map((r) => r.name.length), 4);
  const lines = [title, `${'case'.padEnd(width)}  median ms/step  ratio to ${results[0]!.name}`];
  for (const r of results) {
    lines.push(`${r.name.padEnd(width)}  ${r.medianMs.toFixed(2).padStart(14)}  ${(r.medianMs / baseline).toFixed(3).padStart(8)}`);
  }
  return lines.join('\n');
}
