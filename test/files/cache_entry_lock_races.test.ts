/**
 * Processes racing to compile the same executable cache entries
 * (test/fixtures/executor/race_for_cache_entry.ts): in every round exactly
 * one compiles and the others load what it stored, no two compile at once,
 * and when the one compiling is killed holding the entry's lock, one other
 * process reclaims the lock and compiles instead.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferenceModel, Options } from 'poptfjs';
import { linearModel, sample } from './fixtures.js';
import { ROOT } from '../run_program.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-entry-race-'));
let executableFile = '';

beforeAll(async () => {
  const sourceDir = join(dir, 'source');
  const executor = inferenceModel(linearModel(), { options: new Options().enableExecutableCaching(sourceDir) });
  await executor.compile(sample(4)[0]);
  executor.destroy();
  executableFile = join(sourceDir, readdirSync(sourceDir).find((name) => name.endsWith('.poptfjs'))!);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Compile {
  readonly racer: number;
  readonly start: bigint;
  /** When it ended, or when its process was killed. */
  readonly end: bigint;
}

/** What happened in one round: the compiles, and where each process that finished the round got the executable. */
interface Round {
  readonly compiles: Compile[];
  readonly sources: string[];
}

/**
 * Starts `processes` racers over `rounds` rounds, all at once in each round
 * but `hangRound`, where racer 0 goes first, compiles and hangs holding the
 * lock, the others then wait for it, and racer 0 is killed 300 ms later;
 * returns each round, the errors logged and when racer 0 was killed. Racer 0
 * runs under a parent that never reaps it, so that once killed it is a
 * zombie: a process that still answers signals but no longer runs.
 */
async function race(processes: number, rounds: number, hangRound: number): Promise<{ rounds: Round[]; errors: string[]; killedAt: bigint | undefined }> {
  const cacheDir = join(dir, `cache-${processes}-${rounds}`);
  const goDir = mkdtempSync(join(dir, 'go-'));
  const firstGoDir = mkdtempSync(join(dir, 'go-first-'));
  let killedAt: bigint | undefined;
  const racers = Array.from({ length: processes }, (_, i) => {
    const log = join(goDir, `racer-${i}.log`);
    const args = [
      '--import',
      'tsx',
      'test/fixtures/executor/race_for_cache_entry.ts',
      cacheDir,
      executableFile,
      String(rounds),
      log,
      ...(i === 0 ? [firstGoDir, String(hangRound)] : [goDir]),
    ];
    const command =
      i === 0
        ? (['/usr/bin/python3', ['-c', 'import subprocess, sys, time; subprocess.Popen(sys.argv[1:]); time.sleep(600)', process.execPath, ...args]] as const)
        : ([process.execPath, args] as const);
    const child = spawn(command[0], command[1], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
    let output = '';
    let hanging = false;
    const waiters: Array<() => void> = [];
    child.stdout!.on('data', (chunk: Buffer) => {
      output += String(chunk);
      const hanger = /hanging (\d+)/.exec(output);
      if (hanger && !hanging) {
        hanging = true;
        setTimeout(() => {
          killedAt = process.hrtime.bigint();
          process.kill(Number(hanger[1]), 'SIGKILL');
          waiters.forEach((w) => w());
        }, 300);
      }
      waiters.forEach((w) => w());
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => (waiters.forEach((w) => w()), resolve())));
    /** Resolves once the process printed `text` or exited. */
    const reached = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () => (output.includes(text) || (i === 0 && killedAt !== undefined) || child.exitCode !== null || child.signalCode !== null) && resolve();
        waiters.push(check);
        check();
      });
    return { child, log, exited, reached };
  });
  try {
    await Promise.all(racers.map((r) => r.reached('ready')));
    for (let round = 0; round < rounds; round++) {
      writeFileSync(join(firstGoDir, `go-${round}`), '');
      if (round === hangRound) await racers[0]!.reached('hanging');
      writeFileSync(join(goDir, `go-${round}`), '');
      const finished = Promise.all(racers.map((r) => r.reached(`done ${round}\n`)));
      const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('timeout'), 30_000));
      expect(await Promise.race([finished.then(() => 'finished'), timeout]), `round ${round}`).toBe('finished');
    }
    await Promise.all(racers.slice(1).map((r) => r.exited));
  } finally {
    for (const r of racers) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  }
  await racers[0]!.exited;
  const result: Round[] = Array.from({ length: rounds }, () => ({ compiles: [], sources: [] }));
  const errors: string[] = [];
  racers.forEach((r, racer) => {
    const open = new Map<number, bigint>();
    const lines = existsSync(r.log) ? readFileSync(r.log, 'utf8').split('\n').filter(Boolean) : [];
    for (const line of lines) {
      const [kind, round, value] = line.split(' ') as [string, string, string];
      if (kind === 'error') errors.push(line);
      else if (kind === 'start') open.set(Number(round), BigInt(value));
      else if (kind === 'end') {
        result[Number(round)]!.compiles.push({ racer, start: open.get(Number(round))!, end: BigInt(value) });
        open.delete(Number(round));
      } else if (kind === 'obtained') result[Number(round)]!.sources.push(value);
    }
    // A compile that never ended belongs to the process killed while compiling: it held the lock until the kill.
    for (const [round, start] of open) {
      expect(racer, `racer ${racer} left a compile open without being killed`).toBe(0);
      result[round]!.compiles.push({ racer, start, end: killedAt! });
    }
  });
  return { rounds: result, errors, killedAt };
}

/** Pairs of compiles of one round that ran at the same time. */
function overlaps(compiles: readonly Compile[]): string[] {
  const sorted = [...compiles].sort((a, b) => (a.start < b.start ? -1 : 1));
  return sorted.slice(1).flatMap((b, i) => (b.start < sorted[i]!.end ? [`racer ${b.racer} compiled while racer ${sorted[i]!.racer} did`] : []));
}

describe('the executable cache entry lock between processes', () => {
  it('lets exactly one of six racing processes compile each entry, the others loading it, and one take over from a holder killed while compiling', async () => {
    const processes = 6;
    const hangRound = 2;
    const { rounds, errors, killedAt } = await race(processes, 5, hangRound);
    expect(errors).toEqual([]);
    expect(killedAt).toBeDefined();
    rounds.forEach((round, r) => {
      expect(overlaps(round.compiles), `round ${r}`).toEqual([]);
      const finishing = r < hangRound ? processes : processes - 1;
      const compiled = round.compiles.filter((c) => !(r === hangRound && c.racer === 0));
      expect(compiled, `round ${r}: compiles that finished`).toHaveLength(1);
      expect(round.sources.sort(), `round ${r}`).toEqual(['compiled', ...Array(finishing - 1).fill('disk-cache')]);
    });
    // In the round of the kill, the compile that finished started after the killed holder's lock was reclaimed.
    const hung = rounds[hangRound]!.compiles;
    expect(hung.map((c) => c.racer).sort()).toEqual([0, hung.find((c) => c.racer !== 0)!.racer].sort());
    expect(hung.find((c) => c.racer !== 0)!.start > killedAt!).toBe(true);
  }, 120_000);
});
