/**
 * Profiling: where reports go, from `Options.enableProfiling(dir)` or the
 * Poplar-style `POPTFJS_ENGINE_OPTIONS` (or `POPLAR_ENGINE_OPTIONS`)
 * `'{"autoReport.all":"true", "autoReport.directory":"./reports"}'`, and writing the reports
 * there (atomically: a temporary file renamed into place): the JSON report, the HTML
 * page, and the timeline as a Chrome trace that Perfetto opens.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { environmentEngineSettings } from '../options/engine_options.js';
import { writeFileAtomic } from '../files/atomic_file.js';
import type { Executable } from '../executable/executable.js';
import { htmlReport } from './html_report.js';
import { chromeTrace } from './trace_events.js';

/** The directory profiling reports go to, or undefined when profiling is off: `optionDir`, else the environment's engine options'. */
export function profileDirectory(optionDir: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return optionDir ?? environmentEngineSettings(env)?.reportDirectory;
}

/** The data of the JSON report. */
export function reportData(executable: Executable): object {
  const { graph, ...rest } = executable;
  return { ...rest, graph: { nodes: graph.nodes.length, values: graph.values.length } };
}

/** The files {@link writeProfileReports} wrote. */
export interface ProfileReportFiles {
  /** `<model>-<kind>.json`: the compiled executable's placement, schedule, memory and timeline (its graph counted, not listed). */
  readonly json: string;
  /** `<model>-<kind>.html`: the page a person reads (timeline, memory, blocks and layers). */
  readonly html: string;
  /** `<model>-<kind>.trace.json`: the timeline in the Trace Event Format (Perfetto, chrome://tracing). */
  readonly trace: string;
}

/**
 * Writes the reports of a compiled executable (an executor's
 * `executable`, a plan's `executable`) into `directory`, created if
 * missing, each file atomically; returns their paths.
 */
export function writeProfileReports(directory: string, executable: Executable): ProfileReportFiles {
  mkdirSync(directory, { recursive: true });
  const name = `${executable.modelName.replace(/[^\w.-]+/g, '_')}-${executable.kind}`;
  const files = { json: join(directory, `${name}.json`), html: join(directory, `${name}.html`), trace: join(directory, `${name}.trace.json`) };
  const write = (path: string, text: string) => writeFileAtomic(path, new TextEncoder().encode(text));
  write(files.json, JSON.stringify(reportData(executable), null, 1));
  write(files.html, htmlReport(executable, `${name}.trace.json`));
  write(files.trace, JSON.stringify(chromeTrace(executable)));
  return files;
}
