import { afterEach, describe, expect, it } from 'vitest';
import { ConfigFileError } from '../../lib/common/errors.js';
import { Options } from '../../lib/options/index.js';

const VARIABLES = ['POPTFJS_DEFAULT_OPTIONS', 'POPTFJS_CACHE_DIR'] as const;
const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));

afterEach(() => {
  for (const name of VARIABLES) {
    const value = saved[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

function environmentError(): ConfigFileError {
  try {
    new Options();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    return error as ConfigFileError;
  }
  throw new Error('expected a ConfigFileError');
}

describe('POPTFJS_DEFAULT_OPTIONS', () => {
  it('starts every new Options from its JSON', () => {
    process.env.POPTFJS_DEFAULT_OPTIONS = JSON.stringify({
      deviceIterations: 4,
      training: { gradientAccumulation: 8 },
      executionStrategy: { type: 'ShardedExecution' },
    });
    const s = new Options().settings;
    expect(s.deviceIterations).toBe(4);
    expect(s.training.gradientAccumulation).toBe(8);
    expect(s.executionStrategy.type).toBe('ShardedExecution');
    expect(s.replicationFactor).toBe(1);
    expect(new Options().settings.deviceIterations).toBe(4);
  });

  it('is ignored when unset, empty, or when fromEnvironment is false', () => {
    delete process.env.POPTFJS_DEFAULT_OPTIONS;
    expect(new Options().settings.deviceIterations).toBe(1);
    process.env.POPTFJS_DEFAULT_OPTIONS = '  ';
    expect(new Options().settings.deviceIterations).toBe(1);
    process.env.POPTFJS_DEFAULT_OPTIONS = '{"deviceIterations": 4}';
    expect(new Options({ fromEnvironment: false }).settings.deviceIterations).toBe(1);
  });

  it('bad JSON is a ConfigFileError naming the variable and the position', () => {
    process.env.POPTFJS_DEFAULT_OPTIONS = '{"deviceIterations": 4,\n "replicationFactor": }';
    const error = environmentError();
    expect([error.file, error.line, error.column]).toEqual(['POPTFJS_DEFAULT_OPTIONS', 2, 23]);
    expect(error.message).toBe('POPTFJS_DEFAULT_OPTIONS:2:23: invalid JSON: unexpected character "}"');
  });

  it('an unknown key is a ConfigFileError naming the variable and the key', () => {
    process.env.POPTFJS_DEFAULT_OPTIONS = '{"deviceIterations": 4, "deviceIteration": 5}';
    const error = environmentError();
    expect([error.file, error.line, error.column]).toEqual(['POPTFJS_DEFAULT_OPTIONS', 1, 25]);
    expect(error.message).toBe('POPTFJS_DEFAULT_OPTIONS:1:25: deviceIteration: unknown key "deviceIteration"');
  });

  it('a refused value is a ConfigFileError with the setter error as cause', () => {
    process.env.POPTFJS_DEFAULT_OPTIONS = '{"training": {"gradientAccumulation": 0}}';
    const error = environmentError();
    expect(error.message).toBe('POPTFJS_DEFAULT_OPTIONS:1:15: training.gradientAccumulation: Options.Training.gradientAccumulation: expected a positive integer, got 0');
    expect(error.cause).toBeInstanceOf(RangeError);
  });
});

describe('POPTFJS_CACHE_DIR', () => {
  it('enables executable caching in that directory', () => {
    process.env.POPTFJS_CACHE_DIR = '/tmp/poptfjs-cache';
    expect(new Options().settings.executableCachePath).toBe('/tmp/poptfjs-cache');
    expect(new Options({ fromEnvironment: false }).settings.executableCachePath).toBeUndefined();
  });

  it('wins over a cache path in POPTFJS_DEFAULT_OPTIONS, and an empty value is ignored', () => {
    process.env.POPTFJS_DEFAULT_OPTIONS = '{"executableCachePath": "/tmp/from-json"}';
    process.env.POPTFJS_CACHE_DIR = '/tmp/from-cache-dir';
    expect(new Options().settings.executableCachePath).toBe('/tmp/from-cache-dir');
    process.env.POPTFJS_CACHE_DIR = '';
    expect(new Options().settings.executableCachePath).toBe('/tmp/from-json');
  });

  it('does not affect clones or fromJSON', () => {
    const opts = new Options({ fromEnvironment: false });
    process.env.POPTFJS_CACHE_DIR = '/tmp/poptfjs-cache';
    expect(opts.clone().settings.executableCachePath).toBeUndefined();
    expect(Options.fromJSON({}).settings.executableCachePath).toBeUndefined();
  });
});
