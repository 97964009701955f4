import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-shared-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the executable cache shared by the instances of a run on one host', () => {
  it('3 instances compiling the same model at once with one POPTFJS_CACHE_DIR: exactly one compiles and writes it, the others load it', () => {
    const cache = join(dir, 'cache');
    const { status, stdout, stderr } = runProgram(
      'bin/poptfjs.ts',
      ['run', '--num-instances', '3', '--num-replicas', '3', '--', process.execPath, '--import', 'tsx', 'test/distributed/scripts/cache_writers.ts'],
      { POPTFJS_CACHE_DIR: cache, POPTFJS_LOG_LEVEL: 'info' },
    );
    expect(status, stderr).toBe(0);
    const statistics = stdout
      .split('\n')
      .map((line) => line.replace(/^\[\d\] /, ''))
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { instance: number; statistics: Record<string, number> })
      .sort((a, b) => a.instance - b.instance)
      .map((r) => r.statistics);
    expect(statistics).toHaveLength(3);
    const compiled = { compilations: 1, memoryHits: 0, diskHits: 0, discardedEntries: 0 };
    const loaded = { compilations: 0, memoryHits: 0, diskHits: 1, discardedEntries: 0 };
    expect(statistics.filter((s) => s.compilations === 1)).toEqual([compiled]);
    expect(statistics.filter((s) => s.compilations === 0)).toEqual([loaded, loaded]);
    // The instances share one entry (the instance's index is not part of its key): one write, nothing else left behind.
    const log = `${stdout}${stderr}`;
    expect(log.match(/stored the executable of '[^']+' in the cache/g)).toHaveLength(1);
    expect(log.match(/loaded '[^']+' for training from the disk cache/g)).toHaveLength(2);
    const files = readdirSync(cache);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^[0-9a-f]{64}\.poptfjs$/);
  }, 120_000);
});
