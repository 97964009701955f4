import { afterEach, assert, describe, expect, it } from 'vitest';
import { Options } from '../../lib/options/index.js';
import { configError, configFile, fresh } from './config_test_files.js';
import { OptionsDataError } from '../../lib/option_vocabulary/options_data_error.js';

const savedDefaults = process.env.POPTFJS_DEFAULT_OPTIONS;
afterEach(() => {
  if (savedDefaults === undefined) delete process.env.POPTFJS_DEFAULT_OPTIONS;
  else process.env.POPTFJS_DEFAULT_OPTIONS = savedDefaults;
});

const DEPTH = 50_000;
const POPTORCH_TOO_DEEP = 'nesting deeper than 100 levels (each bracket, call and ".name" counts one level); an option needs far fewer';
const JSON_TOO_DEEP = 'invalid JSON: arrays and objects nested deeper than 100 levels; options need far fewer';

/** The options still work after the error: new ones, and a good file loaded into the same options. */
function expectOptionsStillWork(opts: Options): void {
  delete process.env.POPTFJS_DEFAULT_OPTIONS;
  expect(new Options().settings.deviceIterations).toBe(1);
  opts.loadFromFile(configFile('deviceIterations(3)\n', '.conf'));
  expect(opts.settings.deviceIterations).toBe(3);
}

describe('deeply nested config text', () => {
  it('PopTorch format: 50,000 brackets are refused at the 101st, naming the file, line and column', () => {
    // Line 3: "deviceIterations(" opens bracket 1 at column 17, so bracket 101 is at column 117.
    const path = configFile(`# nested\nreplicationFactor(2)\ndeviceIterations(${'['.repeat(DEPTH)}${']'.repeat(DEPTH)})\n`, '.conf');
    const opts = fresh();
    const error = configError(() => opts.loadFromFile(path));
    expect(error.message).toBe(`${path}:3:117: ${POPTORCH_TOO_DEEP}`);
    expect(opts.settings.replicationFactor).toBe(1);
    expectOptionsStillWork(opts);
  });

  it('PopTorch format: nested parentheses and tuples are refused the same way', () => {
    const path = configFile(`deviceIterations${'('.repeat(DEPTH)}1${',)'.repeat(DEPTH)}\n`, '.conf');
    const opts = fresh();
    expect(configError(() => opts.loadFromFile(path)).message).toBe(`${path}:1:117: ${POPTORCH_TOO_DEEP}`);
    expectOptionsStillWork(opts);
  });

  it('PopTorch format: a 50,000-long ".name" chain is refused at its 100th name', () => {
    // "Training" is columns 1-8; the k-th ".x" puts its name at column 8 + 2k.
    const path = configFile(`Training${'.x'.repeat(DEPTH)}(1)\n`, '.conf');
    const opts = fresh();
    expect(configError(() => opts.loadFromFile(path)).message).toBe(`${path}:1:208: ${POPTORCH_TOO_DEEP}`);
    expectOptionsStillWork(opts);
  });

  it('PopTorch format: a 50,000-long chain of calls is refused', () => {
    const path = configFile(`deviceIterations${'(1)'.repeat(DEPTH)}\n`, '.conf');
    const opts = fresh();
    // The k-th call is at its "(", column 17 + 3(k - 1); the 100th call is the 101st level.
    expect(configError(() => opts.loadFromFile(path)).message).toBe(`${path}:1:314: ${POPTORCH_TOO_DEEP}`);
    expectOptionsStillWork(opts);
  });

  it('a nesting of 100 levels is parsed, 101 is refused', () => {
    // The call is one level; 98 lists and the literal make 100.
    const deepest = configFile(`updatableNamedBuffers(${'['.repeat(98)}"b"${']'.repeat(98)})\n`, '.conf');
    expect(configError(() => fresh().loadFromFile(deepest)).message).toMatch(
      /:1:1: Options\.updatableNamedBuffers: buffers\[0\]: expected a non-empty string, got the array \[\[\[/,
    );
    const tooDeep = configFile(`updatableNamedBuffers(${'['.repeat(99)}"b"${']'.repeat(99)})\n`, '.conf');
    expect(configError(() => fresh().loadFromFile(tooDeep)).message).toBe(`${tooDeep}:1:1: ${POPTORCH_TOO_DEEP}`);
  });

  it('JSON file: 50,000 nested arrays are refused at the 101st bracket', () => {
    // Line 2: `  "executionStrategy": ` is 23 characters, so bracket 1 is at column 24 ("{" on line 1 is level 1).
    const path = configFile(`{\n  "executionStrategy": ${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}\n}\n`, '.json');
    const opts = fresh();
    expect(configError(() => opts.loadFromFile(path)).message).toBe(`${path}:2:123: ${JSON_TOO_DEEP}`);
    expectOptionsStillWork(opts);
  });

  it('JSON file: 50,000 nested objects are refused', () => {
    const path = configFile(`${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`, '.json');
    const opts = fresh();
    expect(configError(() => opts.loadFromFile(path)).message).toBe(`${path}:1:501: ${JSON_TOO_DEEP}`);
    expectOptionsStillWork(opts);
  });

  it('POPTFJS_DEFAULT_OPTIONS: nested JSON is a ConfigFileError naming the variable', () => {
    process.env.POPTFJS_DEFAULT_OPTIONS = `{"patterns": ${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`;
    const error = configError(() => new Options());
    expect(error.message).toBe(`POPTFJS_DEFAULT_OPTIONS:1:113: ${JSON_TOO_DEEP}`);
    expect(error.file).toBe('POPTFJS_DEFAULT_OPTIONS');
    expectOptionsStillWork(fresh());
  });

  it('Options.fromJSON: deeply nested data is an OptionsDataError naming the key', () => {
    const nested = JSON.parse(`${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`) as unknown;
    for (const key of ['executionStrategy', 'patterns', 'updatableNamedBuffers', 'availableMemoryProportion', 'anchoredTensors']) {
      let thrown: unknown;
      try {
        Options.fromJSON({ [key]: nested });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(OptionsDataError);
      expect((thrown as OptionsDataError).path[0]).toBe(key);
    }
    expectOptionsStillWork(fresh());
  });
});

describe('calls with too many arguments', () => {
  it('PopTorch format: a call with 200,000 arguments is refused at the 10,001st', () => {
    const names = Array.from({ length: 200_000 }, (_, index) => `"s${index}"`);
    const path = configFile(`setExecutionStrategy(ShardedExecution(${names.join(',')}))\n`, '.conf');
    const column = 'setExecutionStrategy(ShardedExecution('.length + names.slice(0, 10_000).join(',').length + 2;
    const opts = fresh();
    expect(configError(() => opts.loadFromFile(path)).message).toBe(`${path}:1:${column}: a call takes at most 10000 arguments`);
    expectOptionsStillWork(opts);
  });

  it('PopTorch format: 10,000 arguments are accepted', () => {
    const names = Array.from({ length: 10_000 }, (_, index) => `"s${index}"`);
    const path = configFile(`setExecutionStrategy(ShardedExecution(${names.join(',')}))\n`, '.conf');
    const strategy = fresh().loadFromFile(path).settings.executionStrategy.toJSON();
    assert(strategy.type === 'ShardedExecution', `expected a ShardedExecution, got ${strategy.type}`);
    expect(strategy.stages).toHaveLength(10_000);
  });

  it('JSON: a strategy listing more than 10,000 stages is refused naming the key', () => {
    const stages = Array.from({ length: 10_001 }, (_, index) => ({ blocks: [`b${index}`] }));
    const path = configFile(JSON.stringify({ executionStrategy: { type: 'ShardedExecution', stages } }), '.json');
    expect(configError(() => fresh().loadFromFile(path)).message).toBe(
      // The "stages" key starts at column 49.
      `${path}:1:49: executionStrategy.stages: Too big: expected array to have <=10000 items`,
    );
  });
});
