import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { temporaryFilesIn, writeFileAtomic } from '../../lib/files/atomic_file.js';
import { ROOT } from '../run_program.js';

const scratch = mkdtempSync(join(tmpdir(), 'poptfjs-atomic-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs a writer of `target` that SIGKILLs itself after writing `bytes` bytes; returns its (dead) pid. */
function killedWriter(target: string, bytes: number): number {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/runtime/killed_writer.ts', target, String(bytes)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(result.signal).toBe('SIGKILL');
  return result.pid as number;
}

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number;
}

describe('temporary files of interrupted atomic writes', () => {
  it('a writer killed mid-write leaves a temporary file named with its pid, which the next write of the target removes', () => {
    const dir = join(scratch, 'killed');
    mkdirSync(dir);
    const target = join(dir, 'state.ckpt');
    writeFileSync(target, 'old');
    const pid = killedWriter(target, 4096);
    const [leftover] = temporaryFilesIn(dir);
    expect(temporaryFilesIn(dir)).toHaveLength(1);
    expect(leftover).toMatchObject({ target, writerPid: pid, writerRuns: false, bytes: 4096 });
    expect(leftover!.file).toMatch(new RegExp(`/\\.state\\.ckpt\\.${pid}\\.[0-9a-f]{12}\\.tmp$`));
    expect(readFileSync(target, 'utf8')).toBe('old');

    writeFileAtomic(target, new TextEncoder().encode('new'));
    expect(readdirSync(dir)).toEqual(['state.ckpt']);
    expect(readFileSync(target, 'utf8')).toBe('new');
  });

  it('keeps the temporary files of other targets and of writers that still run', () => {
    const dir = join(scratch, 'kept');
    mkdirSync(dir);
    const target = join(dir, 'model.poptfjs');
    const dead = deadPid();
    const live = process.ppid; // the test runner, which runs
    const names = {
      dead: `.model.poptfjs.${dead}.0123456789ab.tmp`,
      otherTarget: `.other.poptfjs.${dead}.0123456789ab.tmp`,
      live: `.model.poptfjs.${live}.0123456789ab.tmp`,
      own: `.model.poptfjs.${process.pid}.0123456789ab.tmp`,
    };
    for (const name of Object.values(names)) writeFileSync(join(dir, name), 'partial');
    expect(temporaryFilesIn(dir, 'model.poptfjs').map((t) => [t.writerPid, t.writerRuns])).toEqual(
      expect.arrayContaining([
        [dead, false],
        [live, true],
        [process.pid, true],
      ]),
    );
    writeFileAtomic(target, new Uint8Array([1, 2, 3]));
    expect(readdirSync(dir).sort()).toEqual([names.live, names.own, names.otherTarget, 'model.poptfjs'].sort());
    expect(statSync(target).size).toBe(3);
  });
});
