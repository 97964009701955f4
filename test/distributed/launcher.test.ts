import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { instanceLayout } from '../../lib/distributed/instance_layout.js';
import { shellWords } from '../../lib/distributed/shell_words.js';
import { ROOT, runProgram } from '../run_program.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LAYOUT_PROGRAM = ['node', '--import', 'tsx', 'test/distributed/print_popdist_layout.ts'];

function run(args: string[], env: Record<string, string> = {}) {
  return runProgram('bin/poptfjs.ts', ['run', ...args], env, 60_000);
}

/** What instance `i` of `print_popdist_layout.ts` prints in a run of 2 instances × 2 replicas × 2 IPUs. */
function layoutOf(i: number) {
  return {
    isPopdistEnvSet: true,
    instanceIndex: i,
    numInstances: 2,
    numLocalReplicas: 2,
    numTotalReplicas: 4,
    replicaIndexOffset: 2 * i,
    numIpusPerReplica: 2,
    replicationFactor: 2,
    distributed: { processId: i, numProcesses: 2 },
  };
}

/** The lines of `text` that instance `i` printed, without their `[i] ` prefix. */
function linesOf(text: string, i: number): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`[${i}] `))
    .map((line) => line.slice(`[${i}] `.length));
}

/**
 * A program whose instance `index` (its first replica, one replica each)
 * sets up `behaviour[index]` (JavaScript: its signal handlers and timers), or
 * else waits a minute and prints 'finished'; then writes its pid to
 * `<dir>/<name>-<index>.pid` and prints 'started'. A test that signals the
 * instances once their pids are there thus finds their handlers in place.
 */
function pidProgram(name: string, behaviour: Record<number, string>): string[] {
  const file = join(dir, `${name}.mjs`);
  const cases = Object.entries(behaviour)
    .map(([index, code]) => `if (index === ${index}) { ${code} }`)
    .join(' else ');
  writeFileSync(
    file,
    `import { writeFileSync } from 'node:fs';
const index = Number(process.env.POPDIST_REPLICA_INDEX_OFFSET);
${cases} else setTimeout(() => console.log('finished'), 60_000);
writeFileSync(${JSON.stringify(join(dir, name))} + '-' + index + '.pid', String(process.pid));
console.log('started');
`,
  );
  return ['node', file];
}

/** Whether process `pid` still runs (an exited process no parent reaped yet does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function pids(name: string): number[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith(`${name}-`) && f.endsWith('.pid'))
    .map((f) => Number(readFileSync(join(dir, f), 'utf8')));
}

/** What a launcher started with {@link startRun} printed and how it ended. */
interface RunEnd {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `poptfjs run <args>` in the background; `ended` resolves when it exits (it is killed after 2 minutes). */
function startRun(args: string[]): { pid: number; ended: Promise<RunEnd> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/poptfjs.ts', 'run', ...args], {
    cwd: ROOT,
    env: { ...process.env, POPTFJS_IPU_LOCK_DIR: mkdtempSync(join(dir, 'ipus-')) },
    timeout: 120_000,
    killSignal: 'SIGKILL',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const ended = new Promise<RunEnd>((resolve) => child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr })));
  return { pid: child.pid!, ended };
}

/** Resolves once `count` instances of the pid program `name` have written their pids. */
async function started(name: string, count: number): Promise<number[]> {
  for (;;) {
    const found = pids(name);
    if (found.length === count && found.every((pid) => pid > 0)) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Behaviour of an instance that ignores SIGINT, SIGTERM and SIGHUP (saying so), and waits a minute. */
const IGNORES_SIGNALS = "for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => console.log('ignored ' + s)); setTimeout(() => {}, 60_000);";

describe('npx poptfjs run', () => {
  it('runs the command as 2 instances, each with its layout from popdist, its lines prefixed with [<instance>]', () => {
    const { status, stdout, stderr } = run(['--num-instances', '2', '--num-replicas', '4', '--ipus-per-replica', '2', '--', ...LAYOUT_PROGRAM]);
    expect(stderr).toContain('[0] instance 0 on stderr\n');
    expect(stderr).toContain('[1] instance 1 on stderr\n');
    expect(status).toBe(0);
    for (const i of [0, 1]) expect(linesOf(stdout, i).map((line) => JSON.parse(line))).toEqual([layoutOf(i)]);
    expect(stdout.split('\n').filter((line) => line !== '' && !/^\[[01]\] /.test(line))).toEqual([]);
  });

  it('writes each instance output to DIR/instance-<i>.log with --output-dir, stdout and stderr lines alike', () => {
    const out = join(dir, 'logs');
    const { status, stdout } = run(['--num-instances', '2', '--num-replicas', '4', '--ipus-per-replica', '2', '--output-dir', out, '--', ...LAYOUT_PROGRAM]);
    expect(status).toBe(0);
    expect(stdout).toBe('');
    expect(readdirSync(out).sort()).toEqual(['instance-0.log', 'instance-1.log']);
    for (const i of [0, 1]) {
      const lines = readFileSync(join(out, `instance-${i}.log`), 'utf8').split('\n');
      expect(lines.map((line) => (line.startsWith('{') ? JSON.parse(line) : line)).sort()).toEqual(['', `instance ${i} on stderr`, layoutOf(i)].sort());
    }
  });

  it('checks the arithmetic before launching anything', () => {
    const marker = join(dir, 'launched');
    const command = ['node', '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`];
    const uneven = run(['--num-instances', '2', '--num-replicas', '3', '--', ...command]);
    expect(uneven.status).toBe(1);
    expect(uneven.stderr).toBe('poptfjs: run: --num-replicas 3 is not divisible by --num-instances 2: every instance runs the same number of replicas\n');
    const tooMany = run(['--num-instances', '2', '--num-replicas', '4', '--ipus-per-replica', '4', '--', ...command], { POPTFJS_NUM_IPUS: '8' });
    expect(tooMany.status).toBe(1);
    expect(tooMany.stderr).toBe('poptfjs: run: host localhost needs 16 IPUs (2 instance(s) × 2 replica(s) × 4 IPU(s) per replica) but has 8 (POPTFJS_NUM_IPUS)\n');
    expect(existsSync(marker)).toBe(false);
  });

  it('says how to install MPI when there is no mpiexec', () => {
    const empty = mkdtempSync(join(dir, 'path-'));
    const { status, stdout, stderr } = run(['--num-instances', '2', '--num-replicas', '2', '--', 'node', '-e', ''], { PATH: empty });
    expect(status).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'poptfjs: run: no mpiexec on the PATH: poptfjs run launches its instances with MPI; install MPICH (Debian and Ubuntu: apt-get install mpich) or Open MPI\n',
    );
  });

  it('ends the other instances when one exits with an error code, says which and how, and exits with its code', () => {
    const { status, stdout, stderr } = run(['--num-instances', '2', '--num-replicas', '2', '--', ...pidProgram('code', { 1: 'setTimeout(() => process.exit(3), 300);' })]);
    expect(stderr).toContain('poptfjs run: instance 1 exited with code 3; ending the other instances\n');
    expect(status).toBe(3);
    expect(linesOf(stdout, 0)).toEqual(['started']);
    expect(linesOf(stdout, 1)).toEqual(['started']);
    const started = pids('code');
    expect(started).toHaveLength(2);
    expect(started.filter(running)).toEqual([]);
  });

  it('ends the other instances when one is killed by a signal, says which and by what, and exits with 128 + the signal', () => {
    const { status, stderr } = run([
      '--num-instances',
      '2',
      '--num-replicas',
      '2',
      '--',
      ...pidProgram('signal', { 1: "setTimeout(() => process.kill(process.pid, 'SIGKILL'), 300);" }),
    ]);
    expect(stderr).toContain('poptfjs run: instance 1 was killed by signal SIGKILL; ending the other instances\n');
    expect(status).toBe(128 + 9);
    const started = pids('signal');
    expect(started).toHaveLength(2);
    expect(started.filter(running)).toEqual([]);
  });

  it('prints each line of concurrent instances whole with its prefix, 10 KB and 2 MB lines alike, on stdout and stderr', async () => {
    const program = join(dir, 'long_lines.mjs');
    writeFileSync(
      program,
      `const i = Number(process.env.POPDIST_REPLICA_INDEX_OFFSET);
const letter = 'ab'[i];
for (let k = 0; k < 20; k++) {
  process.stdout.write(letter.repeat(10_000) + '\\n');
  process.stderr.write(letter.toUpperCase().repeat(10_000) + '\\n');
}
for (let k = 0; k < 3; k++) process.stdout.write(letter.repeat(2_000_000) + '\\n');
`,
    );
    const { status, stdout, stderr } = await startRun(['--num-instances', '2', '--num-replicas', '2', '--', 'node', program]).ended;
    expect(status).toBe(0);
    const shapes = (text: string) => {
      const counts: Record<string, number> = {};
      for (const line of text.split('\n').filter((l) => l !== '')) {
        const match = /^\[([01])\] (a+|b+|A+|B+)$/.exec(line);
        const key = match ? `[${match[1]}] ${match[2]![0]}×${match[2]!.length}` : `broken line of ${line.length} characters`;
        counts[key] = (counts[key] ?? 0) + 1;
      }
      return counts;
    };
    expect(shapes(stdout)).toEqual({ '[0] a×10000': 20, '[0] a×2000000': 3, '[1] b×10000': 20, '[1] b×2000000': 3 });
    expect(shapes(stderr)).toEqual({ '[0] A×10000': 20, '[1] B×10000': 20 });
  });

  it('passes SIGTERM on to the instances and kills those that ignore it after --kill-after seconds, leaving no process behind', async () => {
    const launched = startRun(['--num-instances', '2', '--num-replicas', '2', '--kill-after', '1', '--', ...pidProgram('term', { 0: IGNORES_SIGNALS, 1: IGNORES_SIGNALS })]);
    const instances = await started('term', 2);
    process.kill(launched.pid, 'SIGTERM');
    const { status, stdout, stderr } = await launched.ended;
    expect(linesOf(stdout, 0)).toContain('ignored SIGTERM');
    expect(linesOf(stdout, 1)).toContain('ignored SIGTERM');
    expect(stderr).toMatch(/poptfjs run: instance [01] was killed by signal SIGKILL; ending the other instances\n/);
    expect(status).toBe(128 + 9);
    expect(instances.filter(running)).toEqual([]);
  });

  it('ends the run on SIGHUP as on SIGTERM, and a killed launcher leaves no instance running', async () => {
    const hungUp = startRun(['--num-instances', '2', '--num-replicas', '2', '--kill-after', '1', '--', ...pidProgram('hup', { 0: IGNORES_SIGNALS })]);
    const instances = await started('hup', 2);
    process.kill(hungUp.pid, 'SIGHUP');
    const { status, stdout } = await hungUp.ended;
    expect(linesOf(stdout, 0)).toContain('ignored SIGTERM');
    expect(status).not.toBe(0);
    expect(instances.filter(running)).toEqual([]);
    // The launcher killed outright: each runner, its connection to the launcher gone, ends its command (SIGTERM, then SIGKILL).
    const killed = startRun(['--num-instances', '2', '--num-replicas', '2', '--kill-after', '1', '--', ...pidProgram('orphan', { 0: IGNORES_SIGNALS })]);
    const orphans = await started('orphan', 2);
    process.kill(killed.pid, 'SIGKILL');
    await killed.ended;
    for (let waited = 0; orphans.some(running) && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(orphans.filter(running)).toEqual([]);
  });

  it('says which instance could not start its command', () => {
    const { status, stderr } = run(['--num-instances', '1', '--num-replicas', '1', '--', join(dir, 'no-such-program')]);
    expect(stderr).toContain(`poptfjs run: instance 0 could not start ${join(dir, 'no-such-program')} (spawn ${join(dir, 'no-such-program')} ENOENT)\n`);
    expect(status).toBe(127);
  });

  it("passes MPICH's process manager connection on to the command: its MPI_Init and MPI_Allreduce work", () => {
    const source = join(dir, 'allreduce.c');
    writeFileSync(
      source,
      `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size, sum;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d of %d, sum of ranks %d\\n", rank, size, sum);
  return MPI_Finalize();
}
`,
    );
    const program = join(dir, 'allreduce');
    const compiled = spawnSync('mpicc', [source, '-o', program], { encoding: 'utf8' });
    expect(compiled.error ?? compiled.stderr).toBe('');
    const { status, stdout } = run(['--num-instances', '3', '--num-replicas', '3', '--', program]);
    expect(status).toBe(0);
    for (const i of [0, 1, 2]) expect(linesOf(stdout, i)).toEqual([`rank ${i} of 3, sum of ranks 3`]);
  });

  it('launches through Open MPI with its arguments, and the instances find their index in its variables', () => {
    // A stand-in for Open MPI's mpiexec: says it is Open MPI, records its arguments, and starts the
    // processes after `-n N` with Open MPI's variables.
    const bin = mkdtempSync(join(dir, 'openmpi-'));
    const argsFile = join(bin, 'args');
    writeFileSync(
      join(bin, 'mpiexec'),
      `#!/bin/sh
if [ "$1" = --version ]; then echo 'mpiexec (OpenRTE) 4.1.4'; exit 0; fi
printf '%s\\n' "$@" > ${argsFile}
while [ "$1" != -n ]; do shift; done
n=$2; shift 2
trap 'kill $(jobs -p)' TERM
i=0; while [ $i -lt $n ]; do OMPI_COMM_WORLD_RANK=$i OMPI_COMM_WORLD_SIZE=$n "$@" & i=$((i+1)); done
wait
`,
    );
    chmodSync(join(bin, 'mpiexec'), 0o755);
    const { status, stdout } = run(
      ['--num-instances', '2', '--num-replicas', '4', '--ipus-per-replica', '2', '--mpi-args', '--tag-output --mca btl self', '--', ...LAYOUT_PROGRAM],
      {
        PATH: `${bin}:${process.env.PATH}`,
      },
    );
    expect(status).toBe(0);
    for (const i of [0, 1]) expect(linesOf(stdout, i).map((line) => JSON.parse(line))).toEqual([layoutOf(i)]);
    const args = readFileSync(argsFile, 'utf8').split('\n');
    const root = process.getuid?.() === 0 ? ['--allow-run-as-root'] : [];
    expect(args.slice(0, root.length + 4)).toEqual([...root, '--bind-to', 'none', '--host', 'localhost:2']);
    expect(args.join(' ')).toContain('-x PATH');
    expect(args.join(' ')).toContain('-x POPTFJS_IPU_LOCK_DIR');
    expect(args.join(' ')).toContain('--tag-output --mca btl self -n 2 ');
  });
});

describe('the layout poptfjs run checks', () => {
  it('places the instances on the hosts in blocks, as evenly as they divide', () => {
    expect(instanceLayout({ numInstances: 5, numReplicas: 10, ipusPerReplica: 1, hosts: ['a', 'b'] }, 16).hosts).toEqual([
      { name: 'a', firstInstance: 0, instances: 3 },
      { name: 'b', firstInstance: 3, instances: 2 },
    ]);
    expect(instanceLayout({ numInstances: 2, numReplicas: 8, ipusPerReplica: 2 }, 16)).toEqual({
      numInstances: 2,
      numReplicas: 8,
      localReplicas: 4,
      ipusPerReplica: 2,
      hosts: [{ name: 'localhost', firstInstance: 0, instances: 2 }],
    });
  });

  it('counts the IPUs each host needs from its own instances', () => {
    // 4 instances of 2 replicas of 2 IPUs: 16 IPUs on one host, 8 on each of two.
    expect(() => instanceLayout({ numInstances: 4, numReplicas: 8, ipusPerReplica: 2 }, 8)).toThrow(
      'run: host localhost needs 16 IPUs (4 instance(s) × 2 replica(s) × 2 IPU(s) per replica) but has 8 (POPTFJS_NUM_IPUS)',
    );
    expect(instanceLayout({ numInstances: 4, numReplicas: 8, ipusPerReplica: 2, hosts: ['a', 'b'] }, 8).hosts.map((h) => h.instances)).toEqual([2, 2]);
  });

  it('refuses hosts without an instance and hosts named twice', () => {
    expect(() => instanceLayout({ numInstances: 2, numReplicas: 2, ipusPerReplica: 1, hosts: ['a', 'b', 'c'] }, 16)).toThrow(
      'run: --host lists 3 hosts for 2 instance(s): every host needs at least one instance',
    );
    expect(() => instanceLayout({ numInstances: 2, numReplicas: 2, ipusPerReplica: 1, hosts: ['a', 'a'] }, 16)).toThrow("run: --host lists 'a' more than once");
  });

  it('reads --mpi-args as a shell splits words', () => {
    expect(shellWords(` -x 'A B' --opt="c \\"d\\"" e\\ f `, '--mpi-args')).toEqual(['-x', 'A B', '--opt=c "d"', 'e f']);
    expect(() => shellWords("-x 'A", '--mpi-args')).toThrow("--mpi-args: unterminated ' in '-x 'A'");
  });
});
