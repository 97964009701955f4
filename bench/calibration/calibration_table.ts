/**
 * The calibration table: each published result next to what poptfjs
 * simulates for its configuration, and their ratio (goal: 0.75 to 1.33).
 */
import { PUBLISHED_RESULTS, type PublishedResult } from './published_results.js';

/** The title of the calibration, as `BENCH_ONLY` matches it. */
export const CALIBRATION_TITLE = 'Calibration against published IPU results';

/** The lowest and highest ratio of simulated to published throughput the model aims for. */
export const CALIBRATION_GOAL = { low: 0.75, high: 1.33 } as const;

/** One row of the table. */
export interface CalibrationRow {
  readonly result: PublishedResult;
  readonly simulated: number;
  readonly ratio: number;
  /** Whether the plan fits the IPUs' memory, as the published run did. */
  readonly fits: boolean;
  /** Seconds `plan()` took. */
  readonly planSeconds: number;
}

/** Plans every published configuration, one after another. */
export async function calibrationRows(results: readonly PublishedResult[] = PUBLISHED_RESULTS): Promise<CalibrationRow[]> {
  const rows: CalibrationRow[] = [];
  for (const result of results) {
    const started = performance.now();
    const { itemsPerSecond, plan } = await result.simulate();
    rows.push({ result, simulated: itemsPerSecond, ratio: itemsPerSecond / result.published, fits: plan.fits, planSeconds: (performance.now() - started) / 1000 });
  }
  return rows;
}

const within = (ratio: number) => ratio >= CALIBRATION_GOAL.low && ratio <= CALIBRATION_GOAL.high;

/** The table as text, for the console. */
export function calibrationText(rows: readonly CalibrationRow[]): string {
  const lines = [`${CALIBRATION_TITLE} (simulated / published items/s; goal ${CALIBRATION_GOAL.low}-${CALIBRATION_GOAL.high}):`];
  lines.push('  model                                            system            framework                     published   simulated   ratio  fits');
  for (const r of rows) {
    lines.push(
      `  ${r.result.model.padEnd(48)} ${r.result.system.padEnd(17)} ${r.result.framework.slice(0, 29).padEnd(29)} ${r.result.published.toFixed(0).padStart(9)}   ${r.simulated.toFixed(0).padStart(9)}   ${r.ratio.toFixed(2)}   ${r.fits ? 'yes' : 'no'}`,
    );
  }
  const inside = rows.filter((r) => within(r.ratio)).length;
  lines.push(`  ${inside} of ${rows.length} ratios within ${CALIBRATION_GOAL.low}-${CALIBRATION_GOAL.high}`);
  for (const r of rows.filter((row) => !within(row.ratio))) {
    lines.push(`  ${r.result.model}, ${r.result.system} at ${r.ratio.toFixed(2)}: ${r.result.deviation ?? 'no reason stated'}`);
  }
  return lines.join('\n');
}

/** The table as Markdown, with each row's configuration, source and deviations. */
export function calibrationMarkdown(rows: readonly CalibrationRow[]): string {
  const inside = rows.filter((r) => within(r.ratio)).length;
  return [
    `## ${CALIBRATION_TITLE}`,
    '',
    'Each published training throughput next to what `plan()` simulates for the same configuration, with the model',
    "built in tfjs (examples/models), with PopTorch's and PopART's defaults where the configuration sets nothing",
    '(lib/strategy/compiler_defaults.ts). No constant of the cost model was fitted to these figures. Goal: every ratio',
    `within ${CALIBRATION_GOAL.low}-${CALIBRATION_GOAL.high}, or a stated reason naming what the simulator does not model; ${inside} of ${rows.length} are within.`,
    '',
    '| model | system | framework | configuration | published | simulated | ratio | fits |',
    '|---|---|---|---|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.result.model} | ${r.result.system} | ${r.result.framework} | ${r.result.configuration} | ${r.result.published.toFixed(0)} ${r.result.unit} | ${r.simulated.toFixed(0)} | ${r.ratio.toFixed(2)} | ${r.fits ? 'yes' : 'no'} |`,
    ),
    '',
    'Sources and what could not be reproduced:',
    '',
    ...rows.map(
      (r) => `- ${r.result.model}, ${r.result.system}, ${r.result.framework}: ${r.result.source}.${r.result.deviation ? ` Not reproduced: ${r.result.deviation}.` : ''}`,
    ),
    '',
    `Each plan took ${Math.min(...rows.map((r) => r.planSeconds)).toFixed(1)}-${Math.max(...rows.map((r) => r.planSeconds)).toFixed(1)} s on this machine.`,
  ].join('\n');
}
