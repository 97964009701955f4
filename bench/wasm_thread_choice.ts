/**
 * The wasm backend's thread count by model size: training steps of a tiny
 * MLP, the MLP 784-512-512-10 and the CNN, each in three processes of its
 * own (the pool's size is fixed when a process starts its backend): on one
 * thread (`POPTFJS_WASM_THREADS=1`), on all cores (`POPTFJS_WASM_THREADS` =
 * the cores), and on the automatic choice (unset: the large kernels on the
 * pool, the rest on one thread; lib/runtime/wasm_thread_choice.ts).
 *
 * The processes take turns, so they see the same machine. A turn starts
 * {@link QUIET_MS} after the previous case's (the threads of a pool spin a
 * while after their last kernel, on the cores the next case would use) and
 * runs steps back to back, as a training loop does: untimed ones for
 * {@link SETTLE_MS}, then {@link TIMED_STEPS} timed ones, whose median is the
 * turn's time; a case's figure is the median of its turns. The untimed
 * steps leave out what a loop pays only at its start: the first step after a
 * pause, which pays for caches and cores gone cold (a tiny MLP's takes about
 * 1 ms, its steps in a loop 0.2 ms), and the automatic choice's answers from
 * its previous turn (it measures the cores busy elsewhere while it computes,
 * over windows of at least MIN_WINDOW_MS of computing,
 * lib/backend/cores_busy_elsewhere.ts). Target: automatic at most 5% slower
 * than the better of the other two.
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { MIN_WINDOW_MS } from '../lib/backend/cores_busy_elsewhere.js';
import { medianOf, targetVerdict, type Benchmark } from './benchmark.js';
import { median, type BenchCase } from './side_by_side.js';
import { stopOnExit } from './stop_on_exit.js';

/** The models thread_choice_step.ts trains, with their titles. */
const MODELS = [
  ['tiny-mlp', 'tiny MLP 16-32-10, batch 16'],
  ['mlp', 'MLP 784-512-512-10, batch 64'],
  ['cnn', 'CNN conv16-maxpool-conv32-dense10, batch 64'],
] as const;

/** The pause before each turn, in milliseconds (not timed). */
const QUIET_MS = 50;

/**
 * How long a turn steps before its timed steps, in milliseconds: two
 * windows of the busy-core measure, so the automatic choice answers from
 * this turn's time alone.
 */
const SETTLE_MS = 2 * MIN_WINDOW_MS;

/** The timed steps of a turn, after {@link SETTLE_MS}. */
const TIMED_STEPS = 10;

/** Node's arguments to run thread_choice_step (`.ts` from the sources, `.js` from dist). */
function stepProgram(): string[] {
  const ext = extname(fileURLToPath(import.meta.url));
  const file = fileURLToPath(new URL(`./thread_choice_step${ext}`, import.meta.url));
  return ext === '.ts' ? ['--import', 'tsx', file] : [file];
}

/**
 * A case stepping `model` in turns in a process of its own with
 * `POPTFJS_WASM_THREADS=threads` (unset: automatic), which ends after `turns` turns.
 */
function processCase(name: string, model: string, threads: number | undefined, turns: number): BenchCase {
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
        stopOnExit(child);
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
          child.stdin.write(`burst ${SETTLE_MS} ${TIMED_STEPS}\n`);
          if (++sent === turns) child.stdin.end();
          return next();
        };
      }
      return median(JSON.parse(await ask()) as number[]);
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
    title: `wasm threads by size: ${title}, training steps in loops of ${TIMED_STEPS} after ${SETTLE_MS} ms, one process per case`,
    rounds,
    warmup,
    rotate: true,
    async cases() {
      const turns = warmup + rounds;
      return [processCase(ONE, model, 1, turns), processCase(ALL, model, availableParallelism(), turns), processCase(AUTOMATIC, model, undefined, turns)];
    },
    verdict(results) {
      const best = Math.min(medianOf(results, ONE)!, medianOf(results, ALL)!);
      const ratio = medianOf(results, AUTOMATIC)! / best;
      return targetVerdict('automatic / the better of 1 and all threads', ratio, 3, '≤ 1.05', ratio <= 1.05);
    },
  }));
}
