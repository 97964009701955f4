/**
 * An engine's report, as Poplar's `Engine::getReport` and
 * `printProfileSummary` give it: the compilation profile (the data the JSON
 * and HTML reports are made from: memory per IPU, placement, schedule, the
 * cost model's timeline) and the execution profile (the runs recorded), and
 * the summary of both as text, with the sections the options ask for
 * (`showVarStorage`, `showOptimizations`, `showExecutionSteps`).
 */
import { PoptfjsError } from '../common/errors.js';
import { formatBytes } from '../ipu/byte_size.js';
import type { Timeline } from '../ipu/timeline.js';
import type { Executable } from '../executable/executable.js';
import { reportData } from '../report/profile_report.js';
import { summaryReport } from '../report/summary_report.js';
import type { ProgramRun } from './execution_profile.js';

/** The options of `printProfileSummary`, each `"true"` or `"false"` (default `"false"`). */
export const PROFILE_SUMMARY_OPTIONS = ['showVarStorage', 'showOptimizations', 'showExecutionSteps'] as const;

/** What `Engine.getReport()` returns. */
export interface EngineReport {
  /** The compilation profile: memory, placement, schedule, programs and the cost model's estimate (the JSON report's data). */
  readonly compilation: object;
  /** The execution profile, when asked for and the engine is instrumented. */
  readonly execution?: {
    /** The runs recorded, in order. */
    readonly runs: readonly ProgramRun[];
    /** Cycles of the runs recorded. */
    readonly totalCycles: number;
    /** The simulated timeline of one run of the step. */
    readonly stepTimeline: Timeline;
  };
}

/** The report of `executable` with, when given, the runs recorded. */
export function engineReport(executable: Executable, runs: readonly ProgramRun[] | undefined): EngineReport {
  return {
    compilation: reportData(executable),
    ...(runs ? { execution: { runs: [...runs], totalCycles: runs.reduce((sum, r) => sum + r.cycles, 0), stepTimeline: executable.hardware.timeline } } : {}),
  };
}

/** Every item of each IPU's memory, largest first. */
export function variableStorage(executable: Executable): string {
  const lines = ['Variable storage:'];
  for (const ipu of executable.hardware.memory.ipus) {
    lines.push(`  IPU ${ipu.ipu}:`);
    for (const item of ipu.items) lines.push(`    ${formatBytes(item.bytes).padEnd(11)} ${item.kind.padEnd(22)} ${item.name}`);
  }
  return lines.join('\n');
}

/** The step's simulated timeline, segment by segment. */
export function executionSteps(executable: Executable): string {
  const lines = ['Execution steps (simulated, per IPU):'];
  const ms = (s: number) => `${(s * 1e3).toFixed(4)} ms`;
  for (const s of executable.hardware.timeline.segments)
    lines.push(`  IPU ${s.ipu}  ${ms(s.start).padStart(13)} - ${ms(s.end).padStart(13)}  ${s.kind.padEnd(10)} ${s.label}`);
  return lines.join('\n');
}

/** The graph rewrites that fired, with how often. */
export function optimizations(executable: Executable): string {
  const fired = Object.entries(executable.firedPatterns);
  return ['Graph rewrites (patterns) that fired:', ...(fired.length ? fired.map(([name, n]) => `  ${name} ×${n}`) : ['  none'])].join('\n');
}

/** The runs recorded, one line each. */
function programRuns(runs: readonly ProgramRun[]): string {
  const lines = ['Programs run (execution profile):'];
  for (const r of runs)
    lines.push(
      `  ${String(r.program).padStart(2)} ${r.name.padEnd(18)} ${String(r.cycles).padStart(12)} cycles from ${r.startCycle}${r.debugName ? `  '${r.debugName}'` : ''}`,
    );
  if (runs.length === 0) lines.push('  none');
  return lines.join('\n');
}

/** The options of a summary, checked: each a known option, `"true"` or `"false"`. */
export function summaryOptions(options: Readonly<Record<string, string>>, where: string): Record<(typeof PROFILE_SUMMARY_OPTIONS)[number], boolean> {
  for (const [key, value] of Object.entries(options)) {
    if (!(PROFILE_SUMMARY_OPTIONS as readonly string[]).includes(key)) {
      throw new PoptfjsError(`${where}: '${key}' is not an option of the summary; the options are ${PROFILE_SUMMARY_OPTIONS.join(', ')}`, { type: 'invalid_option' });
    }
    if (value !== 'true' && value !== 'false') throw new PoptfjsError(`${where}: option '${key}' is '${value}'; expected "true" or "false"`, { type: 'invalid_option' });
  }
  return {
    showVarStorage: options.showVarStorage === 'true',
    showOptimizations: options.showOptimizations === 'true',
    showExecutionSteps: options.showExecutionSteps === 'true',
  };
}

/**
 * The summary: the compiled model's (target memory, placement and schedule,
 * and with execution profiling the simulated execution), then the sections
 * asked for; with `runs`, the programs run.
 */
export function profileSummary(executable: Executable, profiling: boolean, options: Readonly<Record<string, string>>, where: string, runs?: readonly ProgramRun[]): string {
  const show = summaryOptions(options, where);
  const sections = [summaryReport(executable, profiling)];
  if (runs) sections.push(programRuns(runs));
  if (show.showOptimizations) sections.push(optimizations(executable));
  if (show.showVarStorage) sections.push(variableStorage(executable));
  if (show.showExecutionSteps && profiling) sections.push(executionSteps(executable));
  return sections.join('\n\n');
}
