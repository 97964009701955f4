/**
 * Profiling: where reports go, from `Options.enableProfiling(dir)` or the
 * Poplar-style `POPTFJS_ENGINE_OPTIONS='{"autoReport.all":"true",
 * "autoReport.directory":"./reports"}'`, and writing the JSON and HTML
 * reports there (atomically: a temporary file renamed into place).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigFileError } from '../errors.js';
import type { Executable } from '../runtime/executable.js';
import { htmlReport } from './html_report.js';

/** The directory profiling reports go to, or undefined when profiling is off. */
export function profileDirectory(optionDir: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (optionDir !== undefined) return optionDir;
  const raw = env.POPTFJS_ENGINE_OPTIONS;
  if (!raw) return undefined;
  let options: Record<string, unknown>;
  try {
    options = JSON.parse(raw) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigFileError('POPTFJS_ENGINE_OPTIONS', 1, 1, `not valid JSON: ${(error as Error).message}`, error);
  }
  const enabled = options['autoReport.all'] === 'true' || options['autoReport.all'] === true;
  if (!enabled) return undefined;
  const directory = options['autoReport.directory'];
  return typeof directory === 'string' && directory !== '' ? directory : '.';
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
