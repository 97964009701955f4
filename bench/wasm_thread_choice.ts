/**
 * The wasm backend's thread count by model size: one training step of a
 * tiny MLP, the MLP 784-512-512-10 and the CNN, each in three processes of
 * its own (the pool's size is fixed when a process starts its backend): on
 * one thread (`POPTFJS_WASM_THREADS=1`), on all cores (`POPTFJS_WASM_THREADS`
 * = the cores), and on the automatic choice (unset: the large kernels on the
 * pool, the rest on one thread; lib/runtime/wasm_thread_choice.ts). The
 * processes take turns, one step each per round, so they see the same
 * machine; each step starts {@link QUIET_MS} after the previous case's
 * (the threads of a pool spin a while after their last kernel, on the cores
 * the next case would use). Target: automatic at most 5% slower than the better of the other
 * two.
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { medianOf, targetVerdict, type Benchmark } from './benchmark.js';
import type { BenchCase } from './side_by_side.js';

/** The models thread_choice_step.ts trains, with their titles. */
const MODELS = [
  ['tiny-mlp', 'tiny MLP 16-32-10, batch 16'],
  ['mlp', 'MLP 784-512-512-10, batch 64'],
  ['cnn', 'CNN conv16-maxpool-conv32-dense10, batch 64'],
] as const;

/** The pause before each step, in milliseconds (not timed). */
const QUIET_MS = 50;

/** Node's arguments to run thread_choice_step (`.ts` from the sources, `.js` from dist). */
function stepProgram(): string[] {
  const ext = extname(fileURLToPath(import.meta.url));
  const file = fileURLToPath(new URL(`./thread_choice_step${ext}`, import.meta.url));
  return ext === '.ts' ? ['--import', 'tsx', file] : [file];
}

/**
 * A case stepping `model` in a process of its own with
 * `POPTFJS_WASM_THREADS=threads` (unset: automatic), which ends after `steps` steps.
 */
function processCase(name: string, model: string, threads: number | undefined, steps: number): BenchCase {
  let ask: (() => Promise<string>) | undefined;
  let sent = 0;
  return {
    name,
    async step() {
      if (!ask) {
        const env: NodeJS.ProcessEnv = { ...process.env, POPTFJS_BACKEND: 'wasm' };
        if (threads === undefined) delete env.POPTFJS_WASM_THREADS;
        else env.POPTFJS_WASM_THREADS = String(threads);
        const child = spawn(process.execPath, [...stepProgram(), model], { env, stdio: ['pipe', 'pipe', 'inherit'] });
        process.on('exit', () => child.kill('SIGTERM'));
        const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
        const next = async () => {
          const line = await lines.next();
          if (line.done) throw new Error(`${name}: thread_choice_step ${model} ended without answering`);
          return line.value;
        };
        const info = JSON.parse(await next()) as { threads: number; switchable: boolean };
        const expected = threads ?? availableParallelism();
        if (info.threads !== expected || info.switchable !== (threads === undefined && expected > 1)) {
          throw new Error(`${name}: the process computes on ${info.threads} thread(s)${info.switchable ? ', switchable' : ''}`);
        }
        ask = async () => {
          await sleep(QUIET_MS);
          child.stdin.write('step\n');
          if (++sent === steps) child.stdin.end();
          return next();
        };
      }
      return Number(await ask());
    },
  };
}

/** The cases' names. */
const ONE = '1 thread';
const ALL = `${availableParallelism()} threads`;
const AUTOMATIC = 'automatic';

/** One benchmark per model, `rounds` timed rounds each. */
export function wasmThreadChoiceBenchmarks(rounds: number): Benchmark[] {
  const warmup = 3;
  return MODELS.map(([model, title]) => ({
    title: `wasm threads by size: ${title}, training step, one process per case`,
    rounds,
    warmup,
    async cases() {
      const steps = warmup + rounds;
      return [processCase(ONE, model, 1, steps), processCase(ALL, model, availableParallelism(), steps), processCase(AUTOMATIC, model, undefined, steps)];
    },
    verdict(results) {
      const best = Math.min(medianOf(results, ONE)!, medianOf(results, ALL)!);
      const ratio = medianOf(results, AUTOMATIC)! / best;
      return targetVerdict('automatic / the better of 1 and all threads', ratio, 3, '≤ 1.05', ratio <= 1.05);
    },
  }));
}
