/**
 * Before the tests: ops/index.ts written from the files of ops/
 * (scripts/ops_index.mjs), as the build and the type check write it.
 */
import { fileURLToPath } from 'node:url';
import { writeOpsIndex } from '../scripts/ops_index.mjs';

/** Vitest's global setup: runs once, before any test file is loaded. */
export function setup(): void {
  writeOpsIndex(fileURLToPath(new URL('..', import.meta.url)));
}
