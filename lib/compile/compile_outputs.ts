/**
 * The files compiling writes when the engine options ask for them, as
 * Poplar writes them during graph compilation: the archive of the per-tile
 * programs (`target.saveArchive`, or `archive.a` in `autoReport.directory`
 * with `autoReport.outputArchive`) and the lowered variables
 * (`debug.loweredVarDumpFile`, or `lowered_vars.json` in
 * `autoReport.directory` with `autoReport.outputLoweredVars`; both
 * `autoReport` switches follow `autoReport.all` unless set). Each file is
 * written atomically; folders above it are created.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getLogger } from '../common/log.js';
import type { Executable } from '../executable/executable.js';
import { writeArchive } from '../files/ar_archive.js';
import { writeFileAtomic } from '../files/atomic_file.js';
import { loweredVariables } from './lowered_variables.js';
import { archiveMembers } from './tile_programs.js';

const log = getLogger('engine');

/** The files `options` ask compiling to write. */
export function compileOutputPaths(options: Readonly<Record<string, string>>): { archive?: string; loweredVars?: string } {
  const report = (key: string) => (options[key] ?? options['autoReport.all']) === 'true';
  const directory = options['autoReport.directory'] || '.';
  const archive = options['target.saveArchive'] ?? (report('autoReport.outputArchive') ? join(directory, 'archive.a') : undefined);
  const loweredVars = options['debug.loweredVarDumpFile'] ?? (report('autoReport.outputLoweredVars') ? join(directory, 'lowered_vars.json') : undefined);
  return { ...(archive ? { archive } : {}), ...(loweredVars ? { loweredVars } : {}) };
}

/** Writes the files `options` ask for, of the compiled `executable`. */
export function writeCompileOutputs(executable: Executable, options: Readonly<Record<string, string>>): void {
  const { archive, loweredVars } = compileOutputPaths(options);
  if (archive) {
    mkdirSync(dirname(archive), { recursive: true });
    writeArchive(archive, archiveMembers(executable));
    log.info(`wrote the archive of '${executable.modelName}' to ${archive}`);
  }
  if (loweredVars) {
    mkdirSync(dirname(loweredVars), { recursive: true });
    writeFileAtomic(loweredVars, new TextEncoder().encode(`${JSON.stringify(loweredVariables(executable), null, 1)}\n`));
    log.info(`wrote the lowered variables of '${executable.modelName}' to ${loweredVars}`);
  }
}
