import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeviceManager } from 'poptfjs';
import { ROOT, runProgram } from '../run_program.js';

let lockDir: string;
let holders: ChildProcess[] = [];

beforeEach(() => {
  lockDir = mkdtempSync(join(tmpdir(), 'poptfjs-locks-'));
  process.env.POPTFJS_IPU_LOCK_DIR = lockDir;
});

afterEach(() => {
  for (const h of holders) h.kill('SIGKILL');
  holders = [];
  delete process.env.POPTFJS_IPU_LOCK_DIR;
});

/** Starts a process holding device `id`; resolves with its pid once it holds it. */
function holdDevice(id: number, seconds?: number): Promise<{ child: ChildProcess; pid: number; output: () => string }> {
  const args = ['--import', 'tsx', 'test/fixtures/device/hold_ipu.ts', String(id), ...(seconds === undefined ? [] : [String(seconds)])];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, POPTFJS_IPU_LOCK_DIR: lockDir } });
  holders.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += String(chunk);
      const match = /held (\d+)/.exec(output);
      if (match) resolve({ child, pid: Number(match[1]), output: () => output });
    });
    child.on('exit', (code) => reject(new Error(`holder exited (${code}) before holding: ${output}`)));
  });
}

function contend(id: number, env: Record<string, string> = {}): string {
  return runProgram('test/fixtures/device/acquire_ipu.ts', [String(id)], { POPTFJS_IPU_LOCK_DIR: lockDir, ...env }).stdout.trim();
}

describe('device manager', () => {
  it('numbers devices as PopART: single IPUs first, then groups of 2, 4, 8 and 16', () => {
    const devices = new DeviceManager(16).enumerateDevices();
    expect(devices).toHaveLength(16 + 8 + 4 + 2 + 1);
    expect(devices[0]).toMatchObject({ id: 0, numIpus: 1, ipus: [0] });
    expect(devices[16]).toMatchObject({ id: 16, numIpus: 2, ipus: [0, 1] });
    expect(devices[24]).toMatchObject({ id: 24, numIpus: 4, ipus: [0, 1, 2, 3] });
    expect(devices[30]).toMatchObject({ id: 30, numIpus: 16 });
    expect(new DeviceManager(4).enumerateDevices().map((d) => d.numIpus)).toEqual([1, 1, 1, 1, 2, 2, 4]);
    expect(() => new DeviceManager(6)).toThrow('the simulated system must have a power of two IPUs (POPTFJS_NUM_IPUS), got 6');
  });

  it('acquires devices by size and id, attached unless on demand, and creates model, CPU and offline devices', () => {
    const manager = new DeviceManager(4);
    const pair = manager.acquireAvailableDevice(2);
    expect([pair.numIpus, pair.isAttached, pair.kind]).toEqual([2, true, 'Ipu']);
    const onDemand = manager.acquireDeviceById(1, { connectionType: 'OnDemand' });
    expect(onDemand.isAttached).toBe(false);
    onDemand.attach();
    expect(onDemand.isAttached).toBe(true);
    onDemand.detach();
    pair.detach();
    expect(() => manager.acquireAvailableDevice(3)).toThrow('a device has a power of two IPUs, at most 4; asked for 3');
    expect(() => manager.acquireDeviceById(99)).toThrow("there is no device 99: the system's devices are 0 to 6");
    expect(manager.createIpuModelDevice({ numIpus: 2, tiles: 8 }).spec.tiles).toBe(8);
    expect(manager.createCpuDevice().kind).toBe('Cpu');
    const offline = manager.createOfflineIpuDevice();
    expect(offline.canRun).toBe(false);
    expect(() => offline.attach()).toThrow('is an offline target (compile only) and cannot be attached');
  });

  it('reports its target as Poplar does: the tile clock, tiles per IPU and the architecture, GC200 or Bow', () => {
    const manager = new DeviceManager(4);
    const gc200 = manager.createIpuModelDevice({ numIpus: 1 });
    const bow = manager.createIpuModelDevice({ numIpus: 1, ipu: 'Bow' });
    expect([gc200.getTileClockFrequency(), gc200.tilesPerIPU, gc200.version]).toEqual([1.33e9, 1472, 'ipu2']);
    expect([bow.getTileClockFrequency(), bow.tilesPerIPU, bow.version]).toEqual([1.85e9, 1472, 'ipu21']);
  });

  it('refuses an IPU another process holds, naming its pid', async () => {
    const { pid } = await holdDevice(0);
    expect(contend(0)).toBe(`error: IPU 0 is in use by process ${pid}; detach it there, choose other IPUs, or set POPTFJS_WAIT_FOR_IPU=1 to wait for it`);
    expect(contend(1)).toBe('acquired device 1');
    expect(new DeviceManager().enumerateDevices()[0]!.heldBy).toEqual([pid]);
    expect(new DeviceManager().tryAcquireDeviceById(0)).toBeUndefined();
    expect(new DeviceManager().acquireAvailableDevice(1).id).toBe(1);
  });

  it('reclaims the lock of a holder that died', async () => {
    const { child } = await holdDevice(2);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    expect(contend(2)).toBe('acquired device 2');
  });

  it('waits for a busy IPU with POPTFJS_WAIT_FOR_IPU=1', async () => {
    const holder = await holdDevice(3, 1.5);
    const started = Date.now();
    expect(contend(3, { POPTFJS_WAIT_FOR_IPU: '1' })).toBe('acquired device 3');
    expect(Date.now() - started).toBeGreaterThan(900);
    await new Promise((r) => setTimeout(r, 300));
    expect(holder.output()).toContain('released');
  });
});
