/**
 * Profiling: where reports go, from `Options.enableProfiling(dir)` or the
 * Poplar-style `POPTFJS_ENGINE_OPTIONS` (or `POPLAR_ENGINE_OPTIONS`)
 * `'{"autoReport.all":"true", "autoReport.directory":"./reports"}'`, and writing the JSON and HTML
 * reports there (atomically: a temporary file renamed into place).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { environmentEngineSettings } from '../options/engine_options.js';
import { writeFileAtomic } from '../files/atomic_file.js';
import type { Executable } from '../executable/executable.js';
import { htmlReport } from './html_report.js';

/** The directory profiling reports go to, or undefined when profiling is off: `optionDir`, else the environment's engine options'. */
export function profileDirectory(optionDir: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return optionDir ?? environmentEngineSettings(env)?.reportDirectory;
}

/** The data of the JSON report. */
export function reportData(executable: Executable): object {
  const { graph, ...rest } = executable;
  return { ...rest, graph: { nodes: graph.nodes.length, values: graph.values.length } };
}

/** Writes `<name>.json` and `<name>.html` into `directory`; returns their paths. */
export function writeProfileReports(directory: string, executable: Executable): { json: string; html: string } {
  mkdirSync(directory, { recursive: true });
  const name = `${executable.modelName.replace(/[^\w.-]+/g, '_')}-${executable.kind}`;
  const json = join(directory, `${name}.json`);
  const html = join(directory, `${name}.html`);
  writeFileAtomic(json, new TextEncoder().encode(JSON.stringify(reportData(executable), null, 1)));
  writeFileAtomic(html, new TextEncoder().encode(htmlReport(executable)));
  return { json, html };
}
