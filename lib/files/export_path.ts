/**
 * Where `compileAndExport(path)` writes, as PopTorch's `save()` decides it:
 * the directories above the file are created when missing, and a path that
 * is an existing directory gets the file `model.poptfjs` inside it, with a
 * warning naming both (PopTorch writes `model.poptorch` so).
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';

const log = getLogger('poptfjs');

/** The name of the file `compileAndExport` writes into a directory it is given. */
export const EXPORT_FILE_IN_DIRECTORY = 'model.poptfjs';

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The file `compileAndExport(path)` writes (see the module comment); an error naming the path when its folder cannot be made. */
export function exportFilePath(path: string): string {
  if (isDirectory(path)) {
    const file = join(path, EXPORT_FILE_IN_DIRECTORY);
    log.warn(`compileAndExport(${path}): ${path} is a directory, exporting the executable to ${file}`);
    return file;
  }
  const folder = dirname(path);
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    throw new PoptfjsError(`compileAndExport(${path}): cannot create the folder ${folder}: ${error instanceof Error ? error.message : String(error)}`, {
      type: 'file',
      location: path,
      cause: error,
    });
  }
  return path;
}
