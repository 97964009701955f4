/**
 * A benchmark probe run in a child process of its own (its own IPU locks, so
 * nothing else holds its IPUs), which prints its result as one JSON line.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a probe that failed gives instead of its result: the error line it printed, or its exit status. */
export interface FailedProbe {
  readonly failed: string;
}

/** Runs bench/`name` (its .js when compiled, else its .ts under tsx) with `args`; its JSON line, or why it failed. */
export function runProbe<Result>(name: string, args: readonly string[]): Result | FailedProbe {
  const here = dirname(fileURLToPath(import.meta.url));
  const compiled = import.meta.url.endsWith('.js');
  const script = join(here, `${name}${compiled ? '.js' : '.ts'}`);
  const child = spawnSync(process.execPath, [...(compiled ? [] : ['--import', 'tsx']), script, ...args], {
    encoding: 'utf8',
    env: { ...process.env, POPTFJS_IPU_LOCK_DIR: mkdtempSync(join(tmpdir(), 'poptfjs-bench-locks-')) },
    maxBuffer: 64 * 2 ** 20,
  });
  const line = child.stdout.split('\n').find((l) => l.startsWith('{'));
  if (child.status !== 0 || line === undefined) {
    const reason = child.stderr.split('\n').find((l) => /Error/.test(l)) ?? `exit ${child.status}`;
    return { failed: reason.trim() };
  }
  return JSON.parse(line) as Result;
}
