/**
 * Which process holds which simulated IPU, across the processes of a
 * machine: one lock file per IPU (`ipu-<n>.lock`, holding the holder's pid)
 * in `POPTFJS_IPU_LOCK_DIR` (default `<tmpdir>/poptfjs-ipus`). A lock whose
 * holder is dead is reclaimed. Within one process, devices attached to the
 * same IPUs share them (counted, released when the last one lets go, and at
 * exit); `DeviceManager` prefers IPUs this process has not attached.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PoptfjsError } from '../errors.js';
import { environmentSetting } from '../environment.js';
import { getLogger } from '../log.js';

const log = getLogger('devicex');
const held = new Map<number, number>();
let exitHookInstalled = false;

/** The directory of the lock files. */
export function lockDirectory(): string {
  return process.env.POPTFJS_IPU_LOCK_DIR || join(tmpdir(), 'poptfjs-ipus');
}

function lockPath(ipu: number): string {
  return join(lockDirectory(), `ipu-${ipu}.lock`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True while a device of this process has `ipu` attached. */
export function attachedHere(ipu: number): boolean {
  return held.has(ipu);
}

/** The pid holding `ipu` in another live process, if any (stale locks are removed). */
export function otherHolder(ipu: number): number | undefined {
  if (held.has(ipu)) return undefined;
  let pid: number;
  try {
    pid = Number(JSON.parse(readFileSync(lockPath(ipu), 'utf8')).pid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // A torn or unreadable lock file: its writer died while writing it.
    removeStale(ipu, 'unreadable');
    return undefined;
  }
  if (pid === process.pid) return undefined;
  if (isAlive(pid)) return pid;
  removeStale(ipu, `its holder, process ${pid}, is gone`);
  return undefined;
}

function removeStale(ipu: number, why: string): void {
  try {
    unlinkSync(lockPath(ipu));
    log.info(`reclaimed the lock of IPU ${ipu}: ${why}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function tryLock(ipu: number): number | undefined {
  mkdirSync(lockDirectory(), { recursive: true });
  for (;;) {
    const holder = otherHolder(ipu);
    if (holder !== undefined) return holder;
    try {
      const fd = openSync(lockPath(ipu), 'wx');
      try {
        writeSync(fd, JSON.stringify({ pid: process.pid, since: new Date().toISOString() }));
      } finally {
        closeSync(fd);
      }
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Another process created it first: look at who holds it now.
    }
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const ipu of held.keys()) {
      try {
        unlinkSync(lockPath(ipu));
      } catch {
        // Already gone: nothing to release.
      }
    }
    held.clear();
  });
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Whether to wait for busy IPUs (`POPTFJS_WAIT_FOR_IPU=1`, or PopTorch's `POPTORCH_WAIT_FOR_IPU=1`) instead of failing. */
export function waitForIpus(): boolean {
  return environmentSetting('POPTFJS_WAIT_FOR_IPU')?.value === '1';
}

/**
 * Takes the IPUs for this process, all or none. Held by another live process:
 * an error naming it, or, with `wait`, waiting until they are free.
 */
export function lockIpus(ipus: readonly number[], wait = waitForIpus()): void {
  installExitHook();
  for (;;) {
    const taken: number[] = [];
    let busy: { ipu: number; pid: number } | undefined;
    for (const ipu of ipus) {
      if (held.has(ipu)) continue;
      const pid = tryLock(ipu);
      if (pid !== undefined) {
        busy = { ipu, pid };
        break;
      }
      taken.push(ipu);
      held.set(ipu, 0);
    }
    if (!busy) {
      for (const ipu of ipus) held.set(ipu, held.get(ipu)! + 1);
      return;
    }
    for (const ipu of taken) unlockOne(ipu, true);
    if (!wait) {
      throw new PoptfjsError(
        `IPU ${busy.ipu} is in use by process ${busy.pid}; detach it there, choose other IPUs, or set POPTFJS_WAIT_FOR_IPU=1 to wait for it`,
        { type: 'device', location: `IPU ${busy.ipu}` },
      );
    }
    log.debug(`waiting for IPU ${busy.ipu}, held by process ${busy.pid}`);
    sleep(100);
  }
}

function unlockOne(ipu: number, force = false): void {
  const count = held.get(ipu);
  if (count === undefined) return;
  if (!force && count > 1) {
    held.set(ipu, count - 1);
    return;
  }
  held.delete(ipu);
  try {
    unlinkSync(lockPath(ipu));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Lets go of IPUs taken with {@link lockIpus}. */
export function unlockIpus(ipus: readonly number[]): void {
  for (const ipu of ipus) unlockOne(ipu);
}
