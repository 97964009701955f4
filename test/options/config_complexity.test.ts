// Pathological config texts take time linear in their size: each test times n and 8n items and bounds the
// ratio at half the 64 of a quadratic parser (a linear one gives about 8, up to 20 when the larger text leaves
// the young generation of the garbage collector). It is a complexity bound, not a timing: the fastest of a few
// runs of each size, in processor time (so other processes on the machine add nothing), are compared with each other, never
// with a fixed duration.
import { describe, expect, it } from 'vitest';
import { ConfigFileError } from '../../lib/common/errors.js';
import { configFile, fresh } from './config_test_files.js';

/** The processor time `run` takes (user and system, every thread of the process): time spent waiting for a core while other processes run is not counted. */
function milliseconds(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/**
 * How many times longer loading the file made for 8n items takes than the one for n: the fastest of five runs
 * of each, alternating so that a busy machine slows both alike, after a warm-up of each.
 */
function growth(file: (n: number) => string, n: number, load: (path: string) => void): number {
  const small = file(n);
  const large = file(8 * n);
  load(small);
  load(large);
  let fastestSmall = Number.POSITIVE_INFINITY;
  let fastestLarge = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 5; run += 1) {
    fastestSmall = Math.min(
      fastestSmall,
      milliseconds(() => load(small)),
    );
    fastestLarge = Math.min(
      fastestLarge,
      milliseconds(() => load(large)),
    );
  }
  return fastestLarge / fastestSmall;
}

const loads = (path: string): void => {
  fresh().loadFromFile(path);
};

/** Loading must fail with a ConfigFileError (the time is that of reading the text and finding the error). */
const refuses = (path: string): void => {
  try {
    fresh().loadFromFile(path);
  } catch (error) {
    if (error instanceof ConfigFileError) return;
    throw error;
  }
  throw new Error(`expected ${path} to be refused`);
};

const LINEAR = 32;

describe('config parsing time grows linearly', () => {
  it('PopTorch format: anchorTensor lines', () => {
    const file = (n: number): string => configFile(Array.from({ length: n }, (_, i) => `anchorTensor("t${i}", "layer${i}/output")\n`).join(''), '.conf');
    expect(growth(file, 2_000, loads)).toBeLessThan(LINEAR);
    const anchors = fresh().loadFromFile(file(3)).settings.anchoredTensors;
    expect(anchors).toEqual({
      t0: { longName: 'layer0/output', outputReturnPeriod: 1 },
      t1: { longName: 'layer1/output', outputReturnPeriod: 1 },
      t2: { longName: 'layer2/output', outputReturnPeriod: 1 },
    });
  });

  it('JSON: anchored tensors, one per line', () => {
    const file = (n: number): string => {
      const entries = Array.from({ length: n }, (_, i) => `  "t${i}": {"longName": "layer${i}/output"}`);
      return configFile(`{"anchoredTensors": {\n${entries.join(',\n')}\n}}\n`, '.json');
    };
    expect(growth(file, 2_000, loads)).toBeLessThan(LINEAR);
  });

  it('JSON: a long array', () => {
    const file = (n: number): string => configFile(`{"updatableNamedBuffers": [\n${Array.from({ length: n }, (_, i) => `"buffer${i}"`).join(',\n')}\n]}`, '.json');
    expect(growth(file, 10_000, loads)).toBeLessThan(LINEAR);
    expect(fresh().loadFromFile(file(80_000)).settings.updatableNamedBuffers).toHaveLength(80_000);
  });

  it('JSON: an error late in a long file', () => {
    const file = (n: number): string =>
      configFile(`{"updatableNamedBuffers": [\n${Array.from({ length: n }, (_, i) => `"buffer${i}"`).join(',\n')}\n], "unknown": 1}`, '.json');
    expect(growth(file, 10_000, refuses)).toBeLessThan(LINEAR);
  });

  it('PopTorch format: an unknown option name of 100 KB', () => {
    const file = (n: number): string => configFile(`${'x'.repeat(n)}(1)\n`, '.conf');
    expect(growth(file, 12_500, refuses)).toBeLessThan(LINEAR);
  });

  it('PopTorch format: a call with many arguments', () => {
    const file = (n: number): string => configFile(`setExecutionStrategy(ShardedExecution(${Array.from({ length: n }, (_, i) => `"s${i}"`).join(', ')}))\n`, '.conf');
    expect(growth(file, 1_250, loads)).toBeLessThan(LINEAR);
  });

  it('PopTorch format: a call with many keyword arguments', () => {
    const file = (n: number): string => configFile(`deviceIterations(${Array.from({ length: n }, (_, i) => `k${i}=${i}`).join(', ')})\n`, '.conf');
    expect(growth(file, 2_000, refuses)).toBeLessThan(LINEAR);
  });

  it('still suggests a close name', () => {
    expect(() => fresh().loadFromFile(configFile('deviceIteration(2)\n', '.conf'))).toThrow(/unknown option or name deviceIteration; did you mean deviceIterations\?/);
  });
});
