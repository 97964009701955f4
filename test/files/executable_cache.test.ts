import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { clearExecutableCache, executableCacheStatistics, inferenceModel, listCacheTemporaryFiles, listExecutableCache, optim, Options, tf, trainingModel } from 'poptfjs';
import { ExecutableCache, entryPath } from '../../lib/files/executable_cache.js';
import { decodeExecutableFile, readExecutableFile, writeExecutableFile } from '../../lib/files/executable_file.js';
import { ROOT } from '../run_program.js';
import { linearModel, sample } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ChildReport {
  compilations: number;
  memoryHits: number;
  diskHits: number;
  discardedEntries: number;
  loss: number;
  outputs: number[];
}

/** A running test/files/programs/cached_compile.ts with `cacheDir`: its result, and its log so far. */
function compileInChild(cacheDir: string): { result: Promise<{ report: ChildReport; log: string }>; log: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/files/programs/cached_compile.ts'], {
    cwd: ROOT,
    env: { ...process.env, POPTFJS_CACHE_DIR: cacheDir, POPTFJS_LOG_LEVEL: 'INFO' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let log = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const result = new Promise<{ report: ChildReport; log: string }>((resolve, reject) => {
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`cached_compile.ts exited with ${code}: ${log}`));
      else resolve({ report: JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildReport, log });
    });
  });
  return { result, log: () => log };
}

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function delta<T extends object>(before: T, after: T): T {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, (v as number) - (before as Record<string, number>)[k]!])) as T;
}

async function compileStats(fn: () => Promise<void>) {
  const before = executableCacheStatistics();
  await fn();
  return delta(before, executableCacheStatistics());
}

describe('the executable cache in one process', () => {
  const [x, y] = sample();

  it('compiling the same model again is a memory hit; other inputs, compile options or constant optimizer attributes miss', async () => {
    const model = linearModel();
    const compile =
      (options: Options, inputs: tf.Tensor[] = [x]) =>
      async () => {
        const executor = inferenceModel(model, { options });
        await executor.compile(...inputs);
        executor.destroy();
      };
    expect(await compileStats(compile(new Options()))).toMatchObject({ compilations: 1, memoryHits: 0 });
    expect(await compileStats(compile(new Options()))).toMatchObject({ compilations: 0, memoryHits: 1 });
    expect(await compileStats(compile(new Options().logDir(dir).modelName('renamed')))).toMatchObject({ compilations: 0, memoryHits: 1 });
    expect(await compileStats(compile(new Options(), [tf.zeros([2, 10])]))).toMatchObject({ compilations: 1 });
    expect(await compileStats(compile(new Options().patterns('NoPatterns')))).toMatchObject({ compilations: 1 });
    expect(await compileStats(compile(new Options().useOfflineIpuTarget(2)))).toMatchObject({ compilations: 1 });

    const train = (optimizer: (m: tf.LayersModel) => optim.SGD) => async () => {
      const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: optimizer(model) });
      await executor.compile(x, y);
      executor.destroy();
    };
    expect(await compileStats(train((m) => new optim.SGD(m, { lr: 0.01 })))).toMatchObject({ compilations: 1 });
    // lr is a variable attribute: changing it does not recompile.
    expect(await compileStats(train((m) => new optim.SGD(m, { lr: 0.5 })))).toMatchObject({ compilations: 0, memoryHits: 1 });
    // momentum left out is a constant attribute (0); given, it is variable: another executable.
    expect(await compileStats(train((m) => new optim.SGD(m, { lr: 0.01, momentum: 0.9 })))).toMatchObject({ compilations: 1 });
  });

  it('another instance of the same model, whose variables tfjs named differently, hits the cache directory and trains its own weights', async () => {
    const cacheDir = join(dir, 'instances');
    const first = linearModel(11, 11);
    const second = linearModel(11, 11);
    expect(second.weights[0]!.name).not.toBe(first.weights[0]!.name);
    const target = tf.zeros([x.shape[0]!, 11]);
    const train = (model: tf.LayersModel, cache: string | null) =>
      trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }), options: new Options().enableExecutableCaching(cache) });
    const a = train(first, cacheDir);
    expect(await compileStats(() => a.compile(x, target))).toMatchObject({ compilations: 1 });
    // Without a cache directory only the same model again is served from memory.
    const uncached = train(linearModel(11, 11), null);
    expect(await compileStats(() => uncached.compile(x, target))).toMatchObject({ compilations: 1 });
    uncached.destroy();
    const b = train(second, cacheDir);
    expect(await compileStats(() => b.compile(x, target))).toMatchObject({ compilations: 0, diskHits: 1 });
    expect(b.executable.modelName).toBe(second.name);
    const paramNames = b.executable.graph.values.flatMap((v) => (v.source.kind === 'param' ? [v.source.name] : []));
    expect(paramNames.sort()).toEqual(second.weights.map((w) => w.name).sort());
    expect(b.irText()).toContain(`# ${second.layers[0]!.name}`);
    const [, lossA] = (await a(x, target)) as [tf.Tensor, tf.Tensor];
    const [, lossB] = (await b(x, target)) as [tf.Tensor, tf.Tensor];
    expect(lossB.dataSync()[0]).toBe(lossA.dataSync()[0]);
    a.copyWeightsToHost();
    b.copyWeightsToHost();
    expect(second.getWeights()[0]!.dataSync()).toEqual(first.getWeights()[0]!.dataSync());
    a.destroy();
    b.destroy();
  });

  it('a model compiled before POPTFJS_CACHE_DIR changes is stored in the new directory when compiled again', async () => {
    const previous = process.env.POPTFJS_CACHE_DIR;
    const firstDir = join(dir, 'env-first');
    const secondDir = join(dir, 'env-second');
    const model = linearModel(12, 12);
    const compile = async () => {
      const executor = inferenceModel(model);
      await executor.compile(x);
      executor.destroy();
    };
    try {
      process.env.POPTFJS_CACHE_DIR = firstDir;
      expect(await compileStats(compile)).toMatchObject({ compilations: 1 });
      const [entry] = readdirSync(firstDir);
      expect(entry).toMatch(/^[0-9a-f]{64}\.poptfjs$/);
      process.env.POPTFJS_CACHE_DIR = secondDir;
      expect(await compileStats(compile)).toMatchObject({ compilations: 0, memoryHits: 1 });
      expect(readdirSync(secondDir)).toEqual([entry]);
      expect(readExecutableFile(join(secondDir, entry!)).executable).toStrictEqual(readExecutableFile(join(firstDir, entry!)).executable);
      // The entry loads in another cache: a fresh one finds it there without compiling.
      expect(
        await new ExecutableCache().obtain({ memory: 'other', disk: entry!.replace('.poptfjs', '') }, secondDir, () => {
          throw new Error('must not compile');
        }),
      ).toMatchObject({ source: 'disk cache' });
    } finally {
      if (previous === undefined) delete process.env.POPTFJS_CACHE_DIR;
      else process.env.POPTFJS_CACHE_DIR = previous;
    }
  });

  it('a model compiled before is stored in the directory given to enableExecutableCaching when compiled again', async () => {
    const cacheDir = join(dir, 'option-later');
    const model = linearModel(13, 13);
    const compile = (options: Options) => async () => {
      const executor = inferenceModel(model, { options });
      await executor.compile(x);
      executor.destroy();
    };
    expect(await compileStats(compile(new Options()))).toMatchObject({ compilations: 1 });
    expect(existsSync(cacheDir)).toBe(false);
    expect(await compileStats(compile(new Options().enableExecutableCaching(cacheDir)))).toMatchObject({ compilations: 0, memoryHits: 1 });
    expect(listExecutableCache(cacheDir).map((e) => e.contents)).toEqual([{ modelName: model.name, kind: 'inference', backend: tf.getBackend() }]);
  });

  it('with a cache directory, writes entries atomically and lists and clears them', async () => {
    const cacheDir = join(dir, 'in-process');
    const executor = inferenceModel(linearModel(7, 7), { options: new Options().enableExecutableCaching(cacheDir) });
    expect(await compileStats(() => executor.compile(x))).toMatchObject({ compilations: 1 });
    executor.destroy();
    const entries = listExecutableCache(cacheDir);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.contents).toMatchObject({ kind: 'inference' });
    expect(readdirSync(cacheDir).filter((f) => !f.endsWith('.poptfjs'))).toEqual([]);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const beingWritten = `.y.poptfjs.${process.pid}.abcdefabcdef.tmp`;
    writeFileSync(join(cacheDir, `.x.poptfjs.${dead}.abcdefabcdef.tmp`), 'left by a killed writer');
    writeFileSync(join(cacheDir, beingWritten), 'being written');
    writeFileSync(join(cacheDir, 'notes.txt'), 'not ours');
    expect(listCacheTemporaryFiles(cacheDir).map((t) => [t.writerPid, t.writerRuns, t.bytes])).toEqual([
      [dead, false, 23],
      [process.pid, true, 13],
    ]);
    expect(clearExecutableCache(cacheDir)).toMatchObject({ entries: 1, temporaryFiles: 1, liveLocks: 0, liveTemporaryFiles: 1 });
    expect(readdirSync(cacheDir).sort()).toEqual([beingWritten, 'notes.txt']);
  });

  it('compiles without the cache, with a warning, when the cache directory cannot be used', async () => {
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a directory');
    const executor = inferenceModel(linearModel(9, 9), { options: new Options().enableExecutableCaching(join(blocker, 'cache')) });
    const warnings: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((line) => (warnings.push(String(line)), true));
    const stats = await compileStats(() => executor.compile(x));
    spy.mockRestore();
    expect(stats).toMatchObject({ compilations: 1 });
    expect(warnings.join('')).toMatch(/the executable cache in .*a-file\/cache cannot be used \(cannot create the executable cache directory .*\); compiling without it/);
    executor.destroy();
  });

  it('an entry read again with the same bytes shares what was read before; an entry rewritten since is read afresh', async () => {
    const cacheDir = join(dir, 'read-again');
    const executor = inferenceModel(linearModel(14, 14), { options: new Options().enableExecutableCaching(cacheDir) });
    await executor.compile(x);
    executor.destroy();
    const [name] = readdirSync(cacheDir);
    const key = name!.replace('.poptfjs', '');
    const cache = new ExecutableCache();
    const hit = (memory: string) =>
      cache.obtain({ memory, disk: key }, cacheDir, () => {
        throw new Error('must not compile');
      });
    const first = await hit('first instance');
    const second = await hit('second instance');
    expect(second.executable).toBe(first.executable);
    const contents = readExecutableFile(join(cacheDir, name!));
    writeExecutableFile(join(cacheDir, name!), { ...contents, executable: { ...contents.executable, modelName: 'rewritten' } });
    const third = await hit('third instance');
    expect(third.executable.modelName).toBe('rewritten');
    expect({ ...third.executable, modelName: first.executable.modelName }).toStrictEqual(first.executable);
    expect(cache.statistics).toMatchObject({ compilations: 0, diskHits: 3, discardedEntries: 0 });
  });

  it('discards a corrupted entry with a warning, compiles again and replaces it; never deletes on its own', async () => {
    const cacheDir = join(dir, 'corrupted');
    const executor = inferenceModel(linearModel(8, 8), { options: new Options().enableExecutableCaching(cacheDir) });
    await executor.compile(x);
    executor.destroy();
    const [name] = readdirSync(cacheDir);
    const file = join(cacheDir, name!);
    const good = readFileSync(file);
    const corrupt = Uint8Array.from(good);
    corrupt[corrupt.length >> 1] ^= 0x40;
    writeFileSync(file, corrupt);

    const cache = new ExecutableCache();
    const key = name!.replace('.poptfjs', '');
    const warnings: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((line) => (warnings.push(String(line)), true));
    let compiles = 0;
    const result = await cache.obtain({ memory: key, disk: key }, cacheDir, () => {
      compiles++;
      return decodeExecutableFile(good, 'the good entry');
    });
    spy.mockRestore();
    expect(compiles).toBe(1);
    expect(result.source).toBe('compiled');
    expect(cache.statistics).toMatchObject({ compilations: 1, discardedEntries: 1, diskHits: 0 });
    expect(warnings.join('')).toMatch(/discarding the executable cache entry .*\.poptfjs, which cannot be used \(.*corrupted or truncated.*\); compiling again/);
    expect(readExecutableFile(entryPath(cacheDir, key)).executable).toStrictEqual(result.executable);
    expect(
      await new ExecutableCache().obtain({ memory: key, disk: key }, cacheDir, () => {
        throw new Error('must not compile');
      }),
    ).toMatchObject({ source: 'disk cache' });
  });
});

describe('the executable cache across processes', () => {
  const shared = join(dir, 'shared');
  let key = '';

  it('a second process compiles nothing: it loads the entry the first wrote, and computes the same numbers', async () => {
    const first = await compileInChild(shared).result;
    expect(first.report).toMatchObject({ compilations: 1, diskHits: 0 });
    const entries = readdirSync(shared);
    expect(entries).toHaveLength(1);
    key = entries[0]!.replace('.poptfjs', '');
    const second = await compileInChild(shared).result;
    expect(second.report).toMatchObject({ compilations: 0, diskHits: 1 });
    expect(second.log).toContain(`loaded 'sequential_1' for training from the disk cache`);
    expect(second.report.loss).toBe(first.report.loss);
    expect(second.report.outputs).toEqual(first.report.outputs);
  }, 60_000);

  it('processes compiling the same model at once wait for the one holding the lock: one compiles, the others load its entry', async () => {
    const busy = join(dir, 'busy');
    const lock = join(busy, `${key}.lock`);
    spawnSync('mkdir', ['-p', busy]);
    writeFileSync(lock, JSON.stringify({ pid: process.pid, hostname: hostname(), createdUnixMs: Date.now(), token: 'held-by-the-test' }));
    const children = [0, 1, 2].map(() => compileInChild(busy));
    await until(() => children.every((c) => c.log().includes(`waiting for process ${process.pid}`)), 'every process waits for the lock');
    expect(existsSync(entryPath(busy, key))).toBe(false);
    rmSync(lock);
    const results = await Promise.all(children.map((c) => c.result));
    const reports = results.map((r) => r.report);
    expect(reports.reduce((n, r) => n + r.compilations, 0)).toBe(1);
    expect(reports.reduce((n, r) => n + r.diskHits, 0)).toBe(2);
    expect(new Set(reports.map((r) => r.loss)).size).toBe(1);
  }, 60_000);

  it('reclaims the lock of a process that died holding it, with a warning', async () => {
    const stale = join(dir, 'stale');
    spawnSync('mkdir', ['-p', stale]);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(stale, `${key}.lock`), JSON.stringify({ pid: dead, hostname: hostname(), createdUnixMs: Date.now(), token: 'dead' }));
    const { report, log } = await compileInChild(stale).result;
    expect(report).toMatchObject({ compilations: 1 });
    expect(log).toMatch(new RegExp(`reclaimed the stale lock .*${key}\\.lock: its holder, process ${dead}, no longer runs`));
    expect(readdirSync(stale)).toEqual([`${key}.poptfjs`]);
  }, 60_000);
});
