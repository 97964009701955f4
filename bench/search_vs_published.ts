/**
 * The search against the published configurations: for a row of the
 * calibration table, `autoPlan()` searches the same IPUs at the same global
 * batch, with the same model, target IPU, precision and optimizer, and its
 * best configuration is set beside the published one planned as published
 * (the row's own plan), with the seconds the search took. Goal: the search
 * finds one at least as fast, in under 60 s. `BENCH_ONLY=search` runs it
 * alone; `BENCH_SEARCH_ROWS` (a comma-separated list of row numbers of the
 * calibration table, from 1) keeps some rows.
 */
import { availableParallelism, loadavg } from 'node:os';
import { autoPlan, type AutoPlan } from 'poptfjs';
import { PUBLISHED_RESULTS, type PublishedResult, type RowSearch } from './calibration/published_results.js';

/** The title of the table, as `BENCH_ONLY` matches it. */
export const SEARCH_TITLE = 'The search against published configurations';

/** The seconds a search may take. */
export const SEARCH_SECONDS = 60;

/** One row of the table. */
export interface SearchRow {
  /** The row of the calibration table searched. */
  readonly row: PublishedResult;
  /** What the search was asked. */
  readonly problem: RowSearch;
  /** The published configuration planned as published: items per second. */
  readonly published: number;
  /** The search's best: items per second (0 when none fits). */
  readonly found: number;
  readonly search: AutoPlan;
  /** The machine's load average over the last minute when the search ended, and its cores. */
  readonly load: { readonly average: number; readonly cores: number };
}

/** Whether a row meets the goal: at least as fast as published, in under {@link SEARCH_SECONDS}. */
function meetsGoal(r: SearchRow): boolean {
  return r.found >= r.published && r.search.seconds < SEARCH_SECONDS;
}

/** Why a row misses the goal (empty when it meets it): slower than published, or the seconds, the traces and the machine's load. */
function missNote(r: SearchRow): string {
  const notes: string[] = [];
  if (r.found < r.published) notes.push('slower than the published configuration planned as published');
  if (r.search.seconds >= SEARCH_SECONDS) {
    notes.push(`${r.search.seconds.toFixed(0)} s at a load average of ${r.load.average.toFixed(1)} on ${r.load.cores} cores, ${r.search.traces} trace(s)`);
  }
  return notes.join('; ');
}

/** Searches each row of the calibration table (those `BENCH_SEARCH_ROWS` keeps) and plans its published configuration. */
export async function searchRows(results: readonly PublishedResult[] = PUBLISHED_RESULTS): Promise<SearchRow[]> {
  const kept = process.env.BENCH_SEARCH_ROWS?.split(',').map((n) => Number(n) - 1);
  const rows: SearchRow[] = [];
  for (const [i, row] of results.entries()) {
    if (kept && !kept.includes(i)) continue;
    const published = (await row.simulate()).itemsPerSecond;
    const problem = row.search();
    const search = await autoPlan(problem.build, problem.request);
    const load = { average: loadavg()[0]!, cores: availableParallelism() };
    rows.push({ row, problem, published, found: (search.best?.throughput ?? 0) * (problem.itemsPerSample ?? 1), search, load });
  }
  return rows;
}

/** The table as text. */
export function searchText(rows: readonly SearchRow[]): string {
  const lines = [`${SEARCH_TITLE} (items/s, simulated; goal: found / published >= 1 in under ${SEARCH_SECONDS} s):`];
  lines.push('  model                                            system            IPUs  global batch  published   found   ratio  seconds  traces  load  candidates  best');
  for (const r of rows) {
    const { model, system } = r.row;
    lines.push(
      `  ${model.padEnd(48)} ${system.padEnd(17)} ${String(r.problem.request.ipus).padStart(4)}  ${String(r.problem.request.globalBatch).padStart(12)}  ${r.published.toFixed(0).padStart(9)}  ${r.found.toFixed(0).padStart(6)}   ${(r.found / r.published).toFixed(2)}  ${r.search.seconds.toFixed(1).padStart(7)}  ${String(r.search.traces).padStart(6)}  ${r.load.average.toFixed(1).padStart(4)}  ${`${r.search.candidates.length}/${r.search.candidates.length + r.search.rejected.length}`.padStart(10)}  ${r.search.best?.describe() ?? 'none fits'}`,
    );
    if (!meetsGoal(r)) lines.push(`    misses the goal: ${missNote(r)}`);
  }
  const met = rows.filter(meetsGoal).length;
  lines.push(`  ${met} of ${rows.length} searches found a configuration at least as fast as the published one in under ${SEARCH_SECONDS} s`);
  return lines.join('\n');
}

/** The table as Markdown. */
export function searchMarkdown(rows: readonly SearchRow[]): string {
  return [
    `## ${SEARCH_TITLE}`,
    '',
    'For each row of the calibration table, `autoPlan()` searches the same IPUs at the same global batch (the same model, target IPU, precision and optimizer), beside the published configuration planned as published. Goal: at least as fast, in under 60 s. Load: the 1-minute load average when the search ended.',
    '',
    '| model | system | framework | IPUs | global batch | published, planned | found | ratio | seconds | traces | load | fit / planned | best | notes |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.row.model} | ${r.row.system} | ${r.row.framework} | ${r.problem.request.ipus} | ${r.problem.request.globalBatch} | ${r.published.toFixed(0)} | ${r.found.toFixed(0)} | ${(r.found / r.published).toFixed(2)} | ${r.search.seconds.toFixed(1)} | ${r.search.traces} | ${r.load.average.toFixed(1)} | ${r.search.candidates.length} / ${r.search.candidates.length + r.search.rejected.length} | ${r.search.best?.describe() ?? 'none fits'} | ${missNote(r)} |`,
    ),
    '',
    `${rows.filter(meetsGoal).length} of ${rows.length} searches found a configuration at least as fast as the published one in under ${SEARCH_SECONDS} s.`,
  ].join('\n');
}
