/**
 * What `bench/run.ts` runs: a list of benchmarks, each a table of cases
 * measured side by side, optionally with a verdict against its target.
 */
import type { BenchCase, BenchResult } from './side_by_side.js';

/** One benchmark: a titled table of cases measured side by side. */
export interface Benchmark {
  /** The table's title: what is measured, on what problem. */
  readonly title: string;
  /** Timed rounds (every case steps once per round, unless it limits itself). */
  readonly rounds: number;
  /** Untimed rounds before them. */
  readonly warmup: number;
  /** Whether each round starts one case later than the one before: for cases whose turn depends on the case before it. */
  readonly rotate?: boolean;
  /** Builds the cases (models, data, other processes); the first is the baseline of the ratios. */
  cases(): Promise<BenchCase[]>;
  /** A line under the table: the results against the benchmark's target. */
  verdict?(results: readonly BenchResult[]): string;
}

/** A benchmark's measured table. */
export interface BenchmarkTable {
  /** The benchmark's title. */
  readonly title: string;
  /** One result per case, the baseline first. */
  readonly results: readonly BenchResult[];
  /** The line against the target, if the benchmark has one. */
  readonly verdict?: string;
}

/** The median of the case named `name` in `results`, if it was measured. */
export function medianOf(results: readonly BenchResult[], name: string): number | undefined {
  return results.find((r) => r.name === name)?.medianMs;
}

/** "`what` = `value` (target `target`: met|not met)". */
export function targetVerdict(what: string, value: number, digits: number, target: string, met: boolean): string {
  return `${what} = ${value.toFixed(digits)} (target ${target}: ${met ? 'met' : 'not met'})`;
}
