/**
 * Config files for the config-reading tests: written to a scratch directory
 * of the test file's own (removed after its tests), read into fresh options,
 * and the `ConfigFileError` reading one gives.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { ConfigFileError } from '../../lib/common/errors.js';
import { Options } from '../../lib/options/index.js';

/** The scratch directory of the test file that imports this module. */
export const scratch = mkdtempSync(join(tmpdir(), 'poptfjs-config-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let written = 0;

/** Writes `text` to a new file in the scratch directory and returns its path. */
export function configFile(text: string, extension = '.conf'): string {
  written += 1;
  const path = join(scratch, `config${written}${extension}`);
  writeFileSync(path, text);
  return path;
}

/** Options that do not read the environment. */
export function fresh(): Options {
  return new Options({ fromEnvironment: false });
}

/** The ConfigFileError `run` throws. */
export function configError(run: () => unknown): ConfigFileError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    return error as ConfigFileError;
  }
  throw new Error('expected a ConfigFileError');
}
