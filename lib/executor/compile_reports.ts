/**
 * What compiling a model reports: the profile reports written when profiling
 * is enabled (in the `opts.modelName` subdirectory when a name is set, as in
 * PopTorch), and the log line saying what was compiled or loaded.
 */
import { join } from 'node:path';
import { getLogger } from '../common/log.js';
import type { ExecutableSource } from '../files/executable_cache.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { writeProfileReports } from '../report/profile_report.js';
import type { Executable } from '../executable/executable.js';
import { describeSignature } from './call_inputs_check.js';

const log = getLogger('poptfjs');

/** Writes the profile reports of `executable` when `settings` (with the engine options applied) set a profile directory. */
export function writeCompileProfileReports(settings: OptionsSettings, executable: Executable): void {
  // As in PopTorch, a name set with opts.modelName is the reports' subdirectory.
  const reports = settings.profileDir !== undefined && settings.modelName !== undefined ? join(settings.profileDir, settings.modelName) : settings.profileDir;
  if (reports !== undefined) {
    const written = writeProfileReports(reports, executable);
    log.info(`profile reports written to ${written.json} and ${written.html}`);
  }
}

/**
 * Logs that `executable` was compiled (or loaded from `source`), with
 * `parameters` parameters and micro-batch `micro`, by a compilation started
 * at `started` (`performance.now()`).
 */
export function logCompiled(executable: Executable, source: ExecutableSource, parameters: number, micro: number, started: number): void {
  const { graph, inputSignature } = executable;
  log.info(
    () =>
      `${source === 'compiled' ? 'compiled' : 'loaded'} '${executable.modelName}' for ${executable.kind}${source === 'compiled' ? '' : ` from the ${source}`}: ${graph.nodes.length} nodes, ` +
      `${parameters} parameters, micro-batch ${micro}, ${describeSignature(inputSignature)} ` +
      `(${(performance.now() - started).toFixed(1)} ms)`,
  );
}
