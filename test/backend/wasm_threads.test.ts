import { describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { cgroupCpuLimit, MAX_WASM_THREADS } from '../../lib/backend/wasm_threads.js';
import { runProgram } from '../run_program.js';

const EXAMPLE = 'examples/wasm-threads.ts';

/** Runs the example with `POPTFJS_WASM_THREADS=threads` (empty: the automatic choice); returns the threads and losses it printed, and its log. */
function train(threads: string, env: Record<string, string> = {}) {
  const { status, stdout, stderr } = runProgram(EXAMPLE, [], { POPTFJS_BACKEND: 'wasm', POPTFJS_WASM_THREADS: threads, ...env }, 120_000);
  expect(status, stderr).toBe(0);
  const line = (label: string) =>
    stdout
      .split('\n')
      .find((l) => l.startsWith(`${label}: `))!
      .slice(label.length + 2);
  return { threads: Number(line('wasm threads')), losses: line('losses').split(' ').map(Number), stderr };
}

describe('the wasm backend on several threads', () => {
  it('computes on the threads asked for, with the same losses, bit for bit, as on one thread, and lets the process exit', () => {
    const one = train('1');
    const two = train('2', { POPTFJS_LOG_LEVEL: 'INFO' });
    expect(one.threads).toBe(1);
    expect(two.threads).toBe(2);
    expect(two.stderr).toContain('the wasm backend computes on 2 threads');
    expect(one.losses).toHaveLength(10);
    expect(one.losses[9]).toBeLessThan(one.losses[0]!);
    expect(two.losses).toEqual(one.losses);
  });

  it.skipIf(Math.min(availableParallelism(), MAX_WASM_THREADS) < 2)(
    'chooses by kernel size when the count is not forced, on a pool of all the cores, with the same losses, bit for bit, as on one thread',
    () => {
      const one = train('1');
      const automatic = train('', { POPTFJS_LOG_LEVEL: 'INFO' });
      const cores = Math.min(availableParallelism(), MAX_WASM_THREADS);
      expect(automatic.threads).toBe(cores);
      expect(automatic.stderr).toContain(`the wasm backend computes on ${cores} threads, small kernels on one`);
      expect(automatic.losses).toEqual(one.losses);
    },
  );

  it('rejects a thread count that is not an integer from 1 to 8, naming the variable', () => {
    for (const bad of ['0', '9', '1.5', 'many']) {
      const { status, stderr } = runProgram(EXAMPLE, [], { POPTFJS_BACKEND: 'wasm', POPTFJS_WASM_THREADS: bad }, 60_000);
      expect(status).not.toBe(0);
      expect(stderr).toContain(`POPTFJS_WASM_THREADS is '${bad}'; expected an integer from 1 to 8`);
    }
  });
});

describe('the cores a cgroup CPU quota allows', () => {
  const files = (contents: Record<string, string>) => (path: string) => contents[path];

  it('reads cgroup v2 cpu.max, rounding a fractional quota up', () => {
    expect(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': '200000 100000\n' }))).toBe(2);
    expect(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': '150000 100000\n' }))).toBe(2);
    expect(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': '50000 100000\n' }))).toBe(1);
    expect(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': 'max 100000\n' }))).toBeUndefined();
  });

  it('reads cgroup v1 cfs quota and period, where -1 means no quota', () => {
    const v1 = (quota: string) => files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': `${quota}\n`, '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' });
    expect(cgroupCpuLimit(v1('400000'))).toBe(4);
    expect(cgroupCpuLimit(v1('-1'))).toBeUndefined();
  });

  it('is undefined without cgroup files', () => {
    expect(cgroupCpuLimit(files({}))).toBeUndefined();
  });
});
