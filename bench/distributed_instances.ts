/**
 * Data parallelism in one process against several: the same training step
 * (an MLP 256-512-512-10, micro-batch 32 per replica, 2 replicas, SGD) run
 * as 1 instance of 2 replicas and as 2 instances of 1 replica under
 * `poptfjs run` (MPI processes on this machine, their gradients summed with
 * `MPI_Allreduce`). Each case is a run of distributed_instance_step.ts that
 * steps when told (through a file) and reports its step time; the table beneath gives the
 * share of the 2-instance step that instance 0 spent in the all-reduce calls
 * (measured, waiting for the other instance included).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Benchmark } from './benchmark.js';
import { median, type BenchCase } from './side_by_side.js';
import { stopOnExit } from './stop_on_exit.js';

/** What instance 0 reports after a step, in milliseconds. */
interface StepReport {
  readonly stepMs: number;
  readonly allReduceMs: number;
}

/** A file of this project next to this module's tree (`.ts` from the sources, `.js` from dist), and node's arguments to run it. */
function program(relative: string): string[] {
  const ext = extname(fileURLToPath(import.meta.url));
  const file = fileURLToPath(new URL(`${relative}${ext}`, import.meta.url));
  return ext === '.ts' ? ['--import', 'tsx', file] : [file];
}

/** A `poptfjs run` of `instances` instances of the step program, stepping when told; told to end after `steps` steps. */
function instancesCase(name: string, instances: number, steps: number, reports: StepReport[]): BenchCase {
  const stepFile = join(mkdtempSync(join(tmpdir(), 'poptfjs-bench-instances-')), 'step');
  let run: ChildProcessByStdio<null, Readable, null> | undefined;
  let lines: AsyncIterator<string> | undefined;
  let sent = 0;
  return {
    name,
    async step() {
      if (!run) {
        writeFileSync(stepFile, '0');
        const launcher = [...program('../bin/poptfjs'), 'run', '--num-instances', String(instances), '--num-replicas', '2', '--'];
        run = spawn(process.execPath, [...launcher, process.execPath, ...program('./distributed_instance_step')], {
          env: { ...process.env, BENCH_STEP_FILE: stepFile },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const child = run;
        stopOnExit(child);
        lines = createInterface({ input: run.stdout })[Symbol.asyncIterator]();
      }
      writeFileSync(stepFile, String(++sent));
      for (;;) {
        const line = await lines!.next();
        if (line.done) throw new Error(`${name}: poptfjs run ended before reporting a step`);
        const json = line.value.replace(/^\[0\] /, '');
        if (!json.startsWith('{')) continue;
        const report = JSON.parse(json) as StepReport;
        reports.push(report);
        if (sent === steps) writeFileSync(stepFile, 'end');
        return report.stepMs;
      }
    },
  };
}

const ONE_INSTANCE = '1 instance × 2 replicas';
const TWO_INSTANCES = '2 instances × 1 replica (MPI)';

/** The benchmark, `rounds` timed rounds. */
export function distributedInstancesBenchmark(rounds: number): Benchmark {
  const warmup = 3;
  const reports: StepReport[] = [];
  return {
    title: 'Data-parallel training over MPI instances: MLP 256-512-512-10, micro-batch 32 per replica, 2 replicas, SGD',
    rounds,
    warmup,
    async cases() {
      return [instancesCase(ONE_INSTANCE, 1, warmup + rounds, []), instancesCase(TWO_INSTANCES, 2, warmup + rounds, reports)];
    },
    verdict() {
      const timed = reports.slice(warmup);
      const step = median(timed.map((r) => r.stepMs));
      const allReduce = median(timed.map((r) => r.allReduceMs));
      const share = median(timed.map((r) => r.allReduceMs / r.stepMs));
      return `${TWO_INSTANCES}: instance 0 spent a median ${allReduce.toFixed(2)} ms of its ${step.toFixed(2)} ms step in MPI_Allreduce calls (median share ${(100 * share).toFixed(1)}%, waiting for the other instance included)`;
    },
  };
}
