/**
 * A session's reports: the summary report (the executor's, with the
 * sections `SessionOptions.reportOptions` asks for) and the report data
 * (`getReport()`): the compiled graph's memory, placement, schedule and
 * simulated time, and, with execution profiling, the runs.
 */
import { formatBytes } from '../ipu/byte_size.js';
import type { Timeline } from '../ipu/timeline.js';
import { reportData } from '../report/profile_report.js';
import { summaryReport } from '../report/summary_report.js';
import type { Executable } from '../executable/executable.js';

/** What `session.getReport()` returns. */
export interface SessionReport {
  /** The compilation: memory, placement, schedule and the cost model's estimate (the profile report's JSON data). */
  readonly compilation: object;
  /** The runs, when execution profiling is on (`engineOptions: { 'autoReport.all': 'true' }`). */
  readonly execution?: {
    /** Runs so far. */
    readonly runs: number;
    /** Simulated cycles of each run. */
    readonly cyclesPerRun: number;
    /** The simulated timeline of a run. */
    readonly timeline: Timeline;
  };
}

function variableStorage(executable: Executable): string {
  const lines = ['Variable storage:'];
  for (const ipu of executable.hardware.memory.ipus) {
    lines.push(`  IPU ${ipu.ipu}:`);
    for (const item of ipu.items) lines.push(`    ${formatBytes(item.bytes).padEnd(11)} ${item.kind.padEnd(22)} ${item.name}`);
  }
  return lines.join('\n');
}

function executionSteps(executable: Executable): string {
  const lines = ['Execution steps (simulated, per IPU):'];
  const ms = (s: number) => `${(s * 1e3).toFixed(4)} ms`;
  for (const s of executable.hardware.timeline.segments)
    lines.push(`  IPU ${s.ipu}  ${ms(s.start).padStart(13)} - ${ms(s.end).padStart(13)}  ${s.kind.padEnd(10)} ${s.label}`);
  return lines.join('\n');
}

function optimizations(executable: Executable): string {
  const fired = Object.entries(executable.firedPatterns);
  return ['Graph rewrites (patterns) that fired:', ...(fired.length ? fired.map(([name, n]) => `  ${name} ×${n}`) : ['  none'])].join('\n');
}

/** The summary report of a session's executable, with the sections `reportOptions` asks for. */
export function sessionSummaryReport(executable: Executable, profiling: boolean, reportOptions: Readonly<Record<string, string>>): string {
  const sections = [summaryReport(executable, profiling)];
  if (reportOptions.showOptimizations === 'true') sections.push(optimizations(executable));
  if (reportOptions.showVarStorage === 'true') sections.push(variableStorage(executable));
  if (reportOptions.showExecutionSteps === 'true' && profiling) sections.push(executionSteps(executable));
  return sections.join('\n\n');
}

/** The report data of a session's executable after `runs` runs. */
export function sessionReport(executable: Executable, profiling: boolean, runs: number): SessionReport {
  const { timeline } = executable.hardware;
  return {
    compilation: reportData(executable),
    ...(profiling ? { execution: { runs, cyclesPerRun: timeline.cycles, timeline } } : {}),
  };
}
