/**
 * Runs a TypeScript program of the repository under `mpiexec -n N` (the
 * system's MPICH or Open MPI), each process through tsx, in its own process
 * group so that nothing is left behind: the group is ended when the run
 * finishes or times out.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../run_program.js';

/** What the processes printed and how the run exited. */
export interface MpiRunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The JSON lines of stdout, parsed, by their `rank` field. */
  readonly byRank: Array<Record<string, unknown>>;
}

/** Runs `path` (from the repository root) on `processes` processes with `args`. */
export async function mpiRun(path: string, processes: number, args: string[] = [], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<MpiRunResult> {
  const child = spawn('mpiexec', ['-n', String(processes), process.execPath, '--import', 'tsx', path, ...args], {
    cwd: ROOT,
    env: { ...process.env, POPTFJS_IPU_LOCK_DIR: mkdtempSync(join(tmpdir(), 'poptfjs-mpi-ipus-')), ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const endGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // The group has already ended.
    }
  };
  const timer = setTimeout(endGroup, timeoutMs);
  const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  clearTimeout(timer);
  endGroup();
  const byRank: Array<Record<string, unknown>> = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line) as Record<string, unknown>;
    byRank[parsed.rank as number] = parsed;
  }
  return { status, stdout, stderr, byRank };
}
