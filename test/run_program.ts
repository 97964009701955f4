/**
 * Runs a TypeScript program of the repository (an example, a script) in a
 * child process, resolving `poptfjs` to the sources, as a user would run it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What a program printed and how it exited. */
export interface ProgramResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `path` (relative to the repository root) with `args` and extra
 * environment variables. The program has a simulated IPU system of its own
 * (a fresh `POPTFJS_IPU_LOCK_DIR`) unless `env` names one.
 */
export function runProgram(path: string, args: string[] = [], env: Record<string, string> = {}, timeoutMs = 240_000): ProgramResult {
  const result = spawnSync(process.execPath, ['--import', 'tsx', path, ...args], {
    cwd: ROOT,
    env: { ...process.env, POPTFJS_IPU_LOCK_DIR: mkdtempSync(join(tmpdir(), 'poptfjs-program-ipus-')), ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
