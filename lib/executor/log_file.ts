/**
 * The log file of an executor: `<logDir>/poptfjs.log` when its options set
 * `logDir` (PopTorch's directory for log files).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PoptfjsError } from '../common/errors.js';
import type { OptionsSettings } from '../options/options_settings.js';

/** The name of the log file in `logDir`. */
export const LOG_FILE_NAME = 'poptfjs.log';

/**
 * The file an executor with `settings` appends its log lines to, its
 * directory created if missing; undefined without `logDir`. A directory that
 * cannot be made is an error naming it.
 */
export function executorLogFile(settings: Pick<OptionsSettings, 'logDir'>): string | undefined {
  const dir = settings.logDir;
  if (dir === undefined) return undefined;
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new PoptfjsError(`Options.logDir: cannot create the log directory ${dir} (${(error as Error).message}); give a directory that can be written to`, {
      type: 'options',
    });
  }
  return join(dir, LOG_FILE_NAME);
}
