/**
 * Profiling: where reports go, from `Options.enableProfiling(dir)` or the
 * Poplar-style `POPTFJS_ENGINE_OPTIONS` (or `POPLAR_ENGINE_OPTIONS`)
 * `'{"autoReport.all":"true", "autoReport.directory":"./reports"}'`, and writing the JSON and HTML
 * reports there (atomically: a temporary file renamed into place).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { environmentEngineSettings } from '../options/engine_options.js';
import type { Executable } from '../runtime/executable.js';
import { htmlReport } from './html_report.js';

/** The directory profiling reports go to, or undefined when profiling is off: `optionDir`, else the environment's engine options'. */
export function profileDirectory(optionDir: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return optionDir ?? environmentEngineSettings(env)?.reportDirectory;
}

function writeAtomically(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
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
  writeAtomically(json, JSON.stringify(reportData(executable), null, 1));
  writeAtomically(html, htmlReport(executable));
  return { json, html };
}
