/**
 * Load time of a compiled executable: the 200-layer model of the
 * compile-time benchmark, trained with SGD, made runnable three ways, each
 * step from a new model: compiled with executable caching off (the
 * baseline), compiled with an executable-cache hit (`enableExecutableCaching`
 * on a cache filled before the rounds: the model is traced and the cached
 * executable read and checked instead of compiled), and loaded from an
 * exported executable file (`load(path)`, which restores the model too).
 * Each step is timed from wrapping an already built model (or from
 * loading) to a runnable executor.
 * Target: a cache hit under 100 ms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, optim, Options, tf, trainingModel } from 'poptfjs';
import { medianOf, targetVerdict, type Benchmark } from './benchmark.js';
import { BATCH, deepModel, LAYERS, WIDTH } from './compile_time.js';
import type { BenchCase } from './side_by_side.js';

const CACHE_HIT = 'compile, executable-cache hit';

/** The load-time benchmark; its cache and exported file live in a temporary directory removed at exit. */
export function cacheHitLoadBenchmark(rounds: number): Benchmark {
  const x = tf.randomNormal([BATCH, WIDTH], 0, 1, 'float32', 3);
  const y = tf.randomNormal([BATCH, WIDTH], 0, 1, 'float32', 4);
  const directory = mkdtempSync(join(tmpdir(), 'poptfjs-bench-cache-'));
  process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
  const cache = join(directory, 'cache');
  const exported = join(directory, 'model.poptfjs');
  const compileCase = (name: string, cachePath: string | null): BenchCase => ({
    name,
    async step() {
      const model = deepModel();
      const start = performance.now();
      const options = new Options().enableExecutableCaching(cachePath);
      const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.01 }), options });
      await executor.compile(x, y);
      const ms = performance.now() - start;
      executor.destroy();
      model.dispose();
      return ms;
    },
  });
  return {
    title: `Making the ${LAYERS}-layer training model runnable: compile, cache hit, load of an exported file, ms`,
    rounds,
    warmup: 1,
    async cases() {
      // Fill the cache and write the exported file before the rounds.
      await compileCase('fill', cache).step();
      const model = deepModel();
      const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.01 }), options: new Options().enableExecutableCaching(null) });
      await executor.compileAndExport(exported, x, y);
      executor.destroy();
      model.dispose();
      return [
        compileCase('compile, caching off', null),
        compileCase(CACHE_HIT, cache),
        {
          name: 'load(path) of an exported executable',
          async step() {
            const loaded = await load(exported);
            loaded.destroy();
          },
        },
      ];
    },
    verdict(results) {
      const ms = medianOf(results, CACHE_HIT)!;
      return targetVerdict('cache hit, ms', ms, 1, '< 100 ms', ms < 100);
    },
  };
}
