import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PoptfjsError } from '../../lib/common/errors.js';
import { OutputMode, ShardedExecutionSpec } from '../../lib/options/index.js';
import { configError, configFile, fresh, scratch } from './config_test_files.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/options/', import.meta.url));
const fixture = (name: string): string => join(FIXTURES, name);

describe('loadFromFile, PopTorch format', () => {
  it('reads the seed example', () => {
    const opts = fresh().deviceIterations(5).loadFromFile(fixture('seed_example.conf'));
    const s = opts.settings;
    expect(s.deviceIterations).toBe(1);
    expect(s.replicationFactor).toBe(1);
    expect(s.syntheticData).toBe(true);
    expect(s.executionStrategy).toBeInstanceOf(ShardedExecutionSpec);
    expect(s.executionStrategy.toJSON()).toEqual({ type: 'ShardedExecution', autoStage: 'SameAsIpu', stages: [] });
  });

  it('returns the options', () => {
    const opts = fresh();
    expect(opts.loadFromFile(fixture('seed_example.conf'))).toBe(opts);
  });

  it('reads every construct: comments, prefixes, keywords, chains, literals, lists and tuples', () => {
    const s = fresh().enableExecutableCaching('/tmp/x').loadFromFile(fixture('all_constructs.conf')).settings;
    expect(s.deviceIterations).toBe(2);
    expect(s.replicationFactor).toBe(4);
    expect(s.inputReplicaGrouping).toEqual({ size: 4, type: 'Orthogonal' });
    expect([s.outputMode, s.outputReturnPeriod]).toEqual(['EveryN', 2]);
    expect(s.training).toEqual({ gradientAccumulation: 16, reductionType: 'Sum', meanReductionStrategy: 'Running', automaticLossScaling: true });
    expect(s.precision).toMatchObject({
      partialsType: 'half',
      halfFloatCasting: 'FloatDowncastToHalf',
      stochasticRounding: true,
      floatingPointExceptions: false,
    });
    expect(s.tensorLocations).toEqual({
      numIOTiles: 64,
      activation: { useIOTilesToLoad: true },
      weight: { useOnChipStorage: false, minElementsForOffChip: 1000 },
      optimizer: {},
      accumulator: {},
    });
    expect(s.randomSeed).toBe(42);
    expect(s.logDir).toBe('logs/run "one"');
    expect(s.modelName).toBe("it's\tme!");
    expect(s.executableCachePath).toBeUndefined();
    expect(s.anchoredTensors).toEqual({
      loss: { longName: 'model/loss', outputMode: 'EveryN', outputReturnPeriod: 4 },
      act: { longName: 'model/act', outputReturnPeriod: 1 },
    });
    expect(s.executionStrategy.toJSON()).toEqual({
      type: 'PipelinedExecution',
      autoStage: 'SameAsIpu',
      stages: [{ blocks: ['A'], ipu: 0 }, { blocks: ['B', 'C'] }, { blocks: ['D'] }, { blocks: ['E'] }],
    });
    expect(s.distributed).toEqual({ processId: 1, numProcesses: 2 });
    expect(s.syncPattern).toBe('SinglePipeline');
    expect(s.autoRoundNumIPUs).toBe(true);
    expect(s.connectionType).toBe('OnDemand');
  });

  it('reads the seed phased strategy', () => {
    const strategy = fresh().loadFromFile(fixture('phased.conf')).settings.executionStrategy;
    expect(strategy.toJSON()).toEqual({
      type: 'SerialPhasedExecution',
      phases: [{ stages: [{ blocks: ['A'] }, { blocks: ['A2'] }] }, { stages: [{ blocks: ['B'] }, { blocks: ['B2'] }] }],
      separateBackwardPhase: false,
      tensorsLiveness: 'AlwaysLive',
    });
  });

  it('lets a call span lines inside brackets, with trailing commas and chained strategy methods', () => {
    const strategy = fresh().loadFromFile(fixture('multiline.conf')).settings.executionStrategy;
    expect(strategy.toJSON()).toEqual({
      type: 'ParallelPhasedExecution',
      phases: [
        {
          stages: [
            { blocks: ['phase0_ipu0'], ipu: 0 },
            { blocks: ['phase0_ipu1'], ipu: 2 },
          ],
        },
        {
          stages: [
            { blocks: ['phase1_ipu0'], ipu: 1 },
            { blocks: ['phase1_ipu1'], ipu: 3 },
          ],
        },
      ],
      separateBackwardPhase: true,
      tensorsLiveness: 'OffChipAfterFwd',
    });
  });

  it('reads back what a strategy prints', () => {
    const original = fresh().loadFromFile(fixture('multiline.conf'));
    const strategy = original.settings.executionStrategy;
    const copy = fresh().loadFromFile(configFile(`setExecutionStrategy(${strategy.toString()})\n`));
    expect(copy.toJSON().executionStrategy).toEqual(strategy.toJSON());
  });

  it('reads an AutoStage policy and keyword-free flag setters', () => {
    const s = fresh().loadFromFile(configFile('setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement))\nbroadcastBuffers()\n')).settings;
    expect(s.executionStrategy.toJSON()).toEqual({ type: 'PipelinedExecution', autoStage: 'AutoIncrement', stages: [] });
    expect(s.broadcastBuffers).toBe(true);
  });

  it("takes PyTorch's dtypes where PopTorch's options take them: Precision.setPartialsType(torch.half)", () => {
    for (const [dtype, partials] of [
      ['torch.half', 'half'],
      ['torch.float16', 'half'],
      ['torch.float', 'float'],
      ['torch.float32', 'float'],
      ['PartialsType.Half', 'half'],
    ] as const) {
      expect(fresh().loadFromFile(configFile(`Precision.setPartialsType(${dtype})\n`)).settings.precision.partialsType).toBe(partials);
    }
    const error = configError(() => fresh().loadFromFile(configFile('Precision.setPartialsType(torch.int32)\n')));
    expect(error.message).toMatch(/torch has no member int32; its members are half, float16, float, float32/);
  });

  it('accepts an empty file and a file of comments', () => {
    const opts = fresh();
    const before = opts.toJSON();
    opts.loadFromFile(configFile('')).loadFromFile(configFile('# nothing\n\n   // here\n'));
    expect(opts.toJSON()).toEqual(before);
  });
});

describe('ConfigFileError positions', () => {
  it('names file, line and column of an unknown method, with a suggestion', () => {
    const path = fixture('unknown_method.conf');
    const error = configError(() => fresh().loadFromFile(path));
    expect([error.file, error.line, error.column]).toEqual([path, 3, 12]);
    expect(error.message).toBe(
      `${path}:3:12: unknown method gradAccumulation of Training; did you mean gradientAccumulation?; known methods: gradientAccumulation, accumulationAndReplicationReductionType, setMeanAccumulationAndReplicationReductionStrategy, setAutomaticLossScaling`,
    );
    expect(error).toBeInstanceOf(PoptfjsError);
  });

  it('names file, line and column of a bad argument, with the setter error as cause', () => {
    const path = fixture('bad_argument.conf');
    const error = configError(() => fresh().loadFromFile(path));
    expect([error.line, error.column]).toEqual([3, 10]);
    expect(error.message).toBe(`${path}:3:10: Options.Training.gradientAccumulation: expected a positive integer, got 0`);
    expect(error.cause).toBeInstanceOf(RangeError);
  });

  it('names file, line and column of a syntax error', () => {
    const path = fixture('syntax_error.conf');
    const error = configError(() => fresh().loadFromFile(path));
    expect([error.line, error.column]).toEqual([2, 1]);
    expect(error.message).toBe(`${path}:2:1: expected ")" to close the one at line 1, column 17, got "replicationFactor"`);
  });

  const CASES: readonly (readonly [text: string, line: number, column: number, message: string])[] = [
    ['deviceIterations(2', 1, 19, 'expected ")" to close the one at line 1, column 17, got the end of the file'],
    ['deviceIterations(2))', 1, 20, 'expected the end of the line after the option, got ")"'],
    ['deviceIterations(2) replicationFactor(2)', 1, 21, 'expected the end of the line after the option, got "replicationFactor"'],
    ['logDir("unterminated)', 1, 8, 'unterminated string: the closing quote is missing on this line'],
    ["logDir('bad \\q escape')", 1, 13, 'unknown escape sequence \\q'],
    ['deviceIterations(2) $', 1, 21, 'unexpected character "$"'],
    ['deviceIterations(12abc)', 1, 18, 'invalid number "12a"'],
    ['deviceIterations(,)', 1, 18, 'expected a value, a name or a call, got ","'],
    ['Training.(4)', 1, 10, 'expected a name after ".", got "("'],
    ['anchorTensor(short_name="a", "b")', 1, 30, 'a positional argument cannot follow a keyword argument'],
    ['anchorTensor(short_name="a", short_name="b")', 1, 30, 'keyword argument short_name is given twice'],
    ['deviceIterations', 1, 1, 'each statement must call an option method, such as deviceIterations(4)'],
    ['Stage("A")', 1, 1, 'this statement builds a StageSpec but sets no option; pass it to an option method such as setExecutionStrategy(...)'],
    ['deviceIterations(2.5)', 1, 1, 'Options.deviceIterations: expected a positive integer, got 2.5'],
    ['deviceIterations("4")', 1, 1, 'Options.deviceIterations: expected a positive integer, got "4"'],
    ['deviceIterations(1, 2)', 1, 21, 'deviceIterations takes at most 1 argument, got 2'],
    ['deviceIterations(count=1)', 1, 18, 'deviceIterations has no parameter count; its parameters are deviceIterations'],
    ['outputMode(OutputMode.All, output_mode=OutputMode.Sum)', 1, 28, 'outputMode got two values for its parameter outputMode'],
    ['Distributed.disable(1)', 1, 21, 'Distributed.disable takes at most 0 arguments, got 1'],
    ['setExecutionStrategy(Stage("A", ipu=1))', 1, 33, 'Stage takes no keyword arguments'],
    ['setExecutionStrategy(ShardedExecution(Stage("A").ipu(-1)))', 1, 50, 'Stage("A").ipu: expected a non-negative integer (an IPU id), got -1'],
    ['setExecutionStrategy(Stage("A").ipus(1))', 1, 33, 'unknown method ipus of Stage; did you mean ipu?; known methods: ipu'],
    ['setExecutionStrategy(Stage("A"))', 1, 1, 'Options.setExecutionStrategy: expected an execution strategy'],
    ['outputMode(OutputMode.Everything)', 1, 23, 'OutputMode has no member Everything; its members are All, Final, EveryN, Sum, Default'],
    ['outputMode(OutputMode)', 1, 12, 'OutputMode is an enumeration; name one of its members: OutputMode.All'],
    ['outputMode(OutputMode.All.value)', 1, 27, 'OutputMode.All has no attribute value'],
    ['outputMode(poptorch)', 1, 12, 'poptorch is incomplete; name an option, a constructor or an enum'],
    ['poptorch.deviceIterations(2)', 1, 10, 'unknown option or name deviceIterations'],
    ['options.deviceIterations(2)', 1, 1, 'unknown option or name options'],
    ['loadFromFile("other.conf")', 1, 1, 'unknown option or name loadFromFile'],
    ['constructor(1)', 1, 1, 'unknown option or name constructor'],
    ['toString()', 1, 1, 'unknown option or name toString'],
    ['__proto__(1)', 1, 1, 'unknown option or name __proto__'],
    ['Training(1)', 1, 1, 'a TrainingOptions cannot be called'],
    ['OutputMode.All(1)', 1, 12, '"All" cannot be called'],
    ['outputMode(OutputMode.constructor)', 1, 23, 'OutputMode has no member constructor'],
    ['deviceIterations.value(1)', 1, 18, 'deviceIterations has no attribute value'],
    ['\n\n  replicationFactor(2)\n  deviceIterations(-3)', 4, 3, 'Options.deviceIterations: expected a positive integer, got -3'],
  ];

  it.each(CASES)('%j fails at %i:%i', (text, line, column, message) => {
    const path = configFile(text);
    const error = configError(() => fresh().loadFromFile(path));
    expect(error.message).toContain(`${path}:${line}:${column}: ${message}`);
    expect([error.file, error.line, error.column]).toEqual([path, line, column]);
  });

  it('an unreadable file is a ConfigFileError at 1:1', () => {
    const path = join(scratch, 'missing.conf');
    const error = configError(() => fresh().loadFromFile(path));
    expect([error.line, error.column]).toEqual([1, 1]);
    expect(error.message).toContain('cannot read the options file');
  });
});

describe('all-or-nothing application', () => {
  it('leaves the options exactly as they were when a line fails', () => {
    const opts = fresh().deviceIterations(3).outputMode(OutputMode.All);
    opts.Training.gradientAccumulation(2);
    const strategy = opts.settings.executionStrategy;
    const before = opts.toJSON();
    const error = configError(() => opts.loadFromFile(fixture('partial_failure.conf')));
    expect(error.line).toBe(5);
    expect(opts.toJSON()).toStrictEqual(before);
    expect(opts.settings.executionStrategy).toBe(strategy);
  });

  it('keeps the strategy object when a successful file does not set it', () => {
    const opts = fresh();
    const strategy = opts.settings.executionStrategy;
    opts.loadFromFile(configFile('deviceIterations(2)\n'));
    expect(opts.settings.executionStrategy).toBe(strategy);
  });

  it('does the same for JSON files', () => {
    const opts = fresh().replicationFactor(2);
    const before = opts.toJSON();
    configError(() => opts.loadFromFile(fixture('bad_value.json')));
    expect(opts.toJSON()).toStrictEqual(before);
  });
});

describe('loadFromFile, JSON format', () => {
  it('reads a partial JSON file by its extension', () => {
    const s = fresh().replicationFactor(2).loadFromFile(fixture('options.json')).settings;
    expect(s.deviceIterations).toBe(4);
    expect(s.replicationFactor).toBe(2);
    expect([s.outputMode, s.outputReturnPeriod]).toEqual(['EveryN', 2]);
    expect(s.training.gradientAccumulation).toBe(2);
    expect(s.executionStrategy.toJSON()).toEqual({
      type: 'ShardedExecution',
      autoStage: 'SameAsIpu',
      stages: [
        { blocks: ['A'], ipu: 0 },
        { blocks: ['B'], ipu: 1 },
      ],
    });
  });

  it('reads JSON content whatever the extension', () => {
    const s = fresh().loadFromFile(fixture('json_content.conf')).settings;
    expect(s.replicationFactor).toBe(2);
    expect(s.precision.partialsType).toBe('half');
  });

  it('reads back what toJSON wrote', () => {
    const original = fresh().loadFromFile(fixture('all_constructs.conf'));
    const copy = fresh().loadFromFile(configFile(JSON.stringify(original.toJSON(), null, 2), '.json'));
    expect(copy.toJSON()).toStrictEqual(original.toJSON());
  });

  it.each([
    ['bad_key.json', 5, 5, 'training.gradAccum: unknown key "gradAccum"'],
    ['bad_value.json', 3, 3, 'replicationFactor: Options.replicationFactor: expected a positive integer, got -1'],
    ['bad_strategy.json', 6, 26, 'executionStrategy.stages[1].ipu: Invalid input: expected number, received string'],
    ['bad_syntax.json', 3, 1, 'invalid JSON: expected a key in double quotes'],
  ] as const)('%s fails at %i:%i', (name, line, column, message) => {
    const path = fixture(name);
    const error = configError(() => fresh().loadFromFile(path));
    expect(error.message).toBe(`${path}:${line}:${column}: ${message}`);
  });

  it('a JSON value that is not an object fails at 1:1', () => {
    const error = configError(() => fresh().loadFromFile(configFile('[1, 2]', '.json')));
    expect([error.line, error.column]).toEqual([1, 1]);
    expect(error.message).toContain('options data must be an object');
  });
});
