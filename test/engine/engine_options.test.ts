import { afterEach, describe, expect, it } from 'vitest';
import { ENGINE_OPTION_NAMES } from '../../lib/options/engine_options.js';
import { BeginBlock, Engine, Executable, Options, PipelinedExecution, Stage, compileGraph, executableCacheStatistics, inferenceModel, tf } from 'poptfjs';
import { exportedRegressor, regressor } from './engine_fixtures.js';

/** How many compilations `fn` ran. */
async function compilations(fn: () => Promise<void>): Promise<number> {
  const before = executableCacheStatistics().compilations;
  await fn();
  return executableCacheStatistics().compilations - before;
}

/** The engine options of Poplar's reference, by the type of their value, as it documents them. */
const SEED_OPTIONS = {
  boolean: [
    'debug.allowOutOfMemory',
    'debug.retainDebugInformation',
    'debug.cpuMultiThreadExecution',
    'debug.instrument',
    'debug.instrumentCompute',
    'debug.instrumentExternalExchange',
    'debug.instrumentControlFlow',
    'debug.outputAllSymbols',
    'debug.runtimeVerify',
    'debug.trace',
    'debug.verify',
    'opt.enableMultiAccessCopies',
    'opt.limitVertexStateToLower256K',
    'opt.useAutoloader',
    'opt.enableStreamCopyMerging',
    'target.gatewayWriteCombining',
    'target.extendedMemory',
    'autoReport.all',
    'autoReport.outputGraphProfile',
    'autoReport.outputLoweredVars',
    'autoReport.outputArchive',
    'autoReport.outputSerializedGraph',
    'autoReport.outputExecutionProfile',
    'autoReport.streamAtEachRun',
    'autoReport.outputDebugInfo',
    'prng.enableStochasticRounding',
  ],
  integer: [
    'debug.profilingTile',
    'debug.branchRecordTile',
    'debug.supervisorStackSizeInBytes',
    'debug.workerStackSizeInBytes',
    'opt.maxCompilationThreads',
    'opt.maxLinkerThreads',
    'autoReport.executionProfileProgramRunCount',
    'prng.seed',
  ],
  choice: {
    'debug.computeInstrumentationLevel': ['vertex', 'tile', 'ipu', 'device'],
    'opt.internalExchangeOptimisationTarget': ['balanced', 'cycles', 'memory'],
    'target.deterministicWorkers': ['true', 'false', 'portable'],
  },
  string: ['debug.traceFile', 'debug.loweredVarDumpFile', 'target.saveArchive', 'autoReport.directory'],
  integerOrAuto: ['target.maxStreamCallbackThreadsPerNumaNode'],
};

describe('Engine options', () => {
  afterEach(() => {
    delete process.env.POPLAR_ENGINE_OPTIONS;
  });

  it("are exactly the reference's, each accepting the values of its documented type and refusing others", async () => {
    const names = [...SEED_OPTIONS.boolean, ...SEED_OPTIONS.integer, ...Object.keys(SEED_OPTIONS.choice), ...SEED_OPTIONS.string, ...SEED_OPTIONS.integerOrAuto];
    expect([...ENGINE_OPTION_NAMES].sort()).toEqual(names.sort());
    const { path } = await exportedRegressor(50, 2);
    const executable = Executable.fromFile(path);
    const accepts = (key: string, value: string) => expect(new Engine(executable, { [key]: value }).getEngineOptions()[key]).toBe(value);
    const refuses = (key: string, value: string, expected: string) =>
      expect(() => new Engine(executable, { [key]: value })).toThrow(`Engine options['${key}'] is '${value}'; expected ${expected}`);
    for (const key of SEED_OPTIONS.boolean) {
      accepts(key, 'false');
      refuses(key, 'on', '"true" or "false"');
    }
    for (const key of SEED_OPTIONS.integer) {
      accepts(key, '3');
      refuses(key, '2.5', 'a non-negative integer');
    }
    for (const [key, values] of Object.entries(SEED_OPTIONS.choice)) {
      for (const value of values) accepts(key, value);
      refuses(key, 'other', `one of ${values.join(', ')}`);
    }
    for (const key of SEED_OPTIONS.string) accepts(key, key === 'target.saveArchive' || key === 'debug.loweredVarDumpFile' ? '' : 'any text');
    for (const key of SEED_OPTIONS.integerOrAuto) {
      accepts(key, 'auto');
      accepts(key, '2');
      refuses(key, 'all', 'a non-negative integer or "auto"');
    }
  });

  it('accepts every option of the seed by its documented type and values, and refuses others naming the option and what is expected', async () => {
    const { path } = await exportedRegressor(51, 2);
    const executable = Executable.fromFile(path);
    const engine = (options: Record<string, string>) => new Engine(executable, options);
    const accepted = {
      'target.maxStreamCallbackThreadsPerNumaNode': 'auto',
      'debug.loweredVarDumpFile': 'vars.capnp',
      'opt.enableStreamCopyMerging': 'false',
      'target.extendedMemory': 'true',
      'debug.computeInstrumentationLevel': 'ipu',
      'target.deterministicWorkers': 'portable',
      'opt.internalExchangeOptimisationTarget': 'balanced',
      'debug.profilingTile': '1471',
    };
    expect(engine(accepted).getEngineOptions()).toEqual(accepted);
    expect(engine({ 'target.maxStreamCallbackThreadsPerNumaNode': '4' }).getEngineOptions()['target.maxStreamCallbackThreadsPerNumaNode']).toBe('4');
    expect(() => engine({ 'target.maxStreamCallbackThreadsPerNumaNode': 'banana' })).toThrow(
      `Engine options['target.maxStreamCallbackThreadsPerNumaNode'] is 'banana'; expected a non-negative integer or "auto"`,
    );
    expect(() => engine({ 'debug.instrument': 'yes' })).toThrow(`Engine options['debug.instrument'] is 'yes'; expected "true" or "false"`);
    expect(() => engine({ 'opt.maxCompilationThreads': '-1' })).toThrow(`Engine options['opt.maxCompilationThreads'] is '-1'; expected a non-negative integer`);
    expect(() => engine({ 'debug.computeInstrumentationLevel': 'thread' })).toThrow(
      `Engine options['debug.computeInstrumentationLevel'] is 'thread'; expected one of vertex, tile, ipu, device`,
    );
    expect(() => engine({ 'debug.everything': 'true' })).toThrow(
      /Engine options: 'debug.everything' is not a Poplar engine option; the options are debug\.allowOutOfMemory, /,
    );
    expect(() => engine({ 'target.extendedMemory': 'true' })).toThrow(`Engine options: 'target.extendedMemory' requires 'opt.enableStreamCopyMerging' set to "false"`);
    expect(() => engine({ 'autoReport.all': 'true', 'debug.retainDebugInformation': 'false' })).toThrow(
      `Engine options: 'debug.retainDebugInformation' must be "true" when profiling is enabled (autoReport.*)`,
    );
    expect(() => engine({ 'debug.profilingTile': '1472' })).toThrow(`Engine options: 'debug.profilingTile' is 1472, but the device has 1472 tiles per IPU`);
    expect(() => engine({ 'debug.branchRecordTile': '1472' })).toThrow(`Engine options: 'debug.branchRecordTile' is 1472, but the device has 1472 tiles`);
  });

  it("POPLAR_ENGINE_OPTIONS overrides the program's options, as the seed says", async () => {
    const { path } = await exportedRegressor(52, 2);
    process.env.POPLAR_ENGINE_OPTIONS = '{"debug.instrument":"true","opt.useAutoloader":"false"}';
    const engine = new Engine(Executable.fromFile(path), { 'debug.instrument': 'false', 'prng.seed': '7' });
    expect(engine.getEngineOptions()).toEqual({ 'debug.instrument': 'true', 'opt.useAutoloader': 'false', 'prng.seed': '7' });
    // Instrumented by the environment: the execution profile is kept.
    expect(engine.getReport().execution).toEqual({ runs: [], totalCycles: 0, stepTimeline: engine.executable.hardware.timeline });
  });

  it('compileGraph records its options in the executable, and an engine of it refuses other values of those compiling decides', async () => {
    const model = regressor(53);
    const executor = inferenceModel(model);
    await executor(tf.zeros([2, 5]));
    const progress: Array<[number, number]> = [];
    const executable = compileGraph(
      { graph: executor.executable.graph, modelName: 'regressor' },
      ['weightsFromHost', 'step'],
      { 'debug.allowOutOfMemory': 'true' },
      (done, total) => progress.push([done, total]),
    );
    expect(progress).toEqual([
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
    ]);
    expect(executable.programs).toEqual([
      { index: 0, name: 'weightsFromHost' },
      { index: 1, name: 'step' },
    ]);
    expect(executable.engineOptions).toEqual({ 'debug.allowOutOfMemory': 'true' });
    expect(new Engine(executable).getEngineOptions()).toEqual({ 'debug.allowOutOfMemory': 'true' });
    expect(() => new Engine(executable, { 'debug.allowOutOfMemory': 'false' })).toThrow(
      "Engine options: 'debug.allowOutOfMemory' is 'false', but the executable was compiled with 'true'; the options must be those given to compileGraph",
    );
    expect(() => compileGraph({ graph: executor.executable.graph }, ['step', 'optimizerFromHost'])).toThrow(
      "compileGraph programs: program 1 is 'optimizerFromHost', but an inference graph has no optimizer",
    );
    expect(() => compileGraph({ graph: executor.executable.graph }, ['step', 'run'])).toThrow(
      "compileGraph programs: program 1 is 'run'; the programs are weightsFromHost, optimizerFromHost, step, weightsToHost",
    );
    expect(() => compileGraph({ graph: executor.executable.graph }, [])).toThrow(/compileGraph programs: no programs/);
    expect(() => compileGraph({ graph: executor.executable.graph }, ['step'], { 'debug.allowOutOfMemory': 'maybe' })).toThrow(
      `compileGraph options['debug.allowOutOfMemory'] is 'maybe'; expected "true" or "false"`,
    );
  });

  it('the engine options of the environment that change what is compiled are part of the executable cache key; the others are not', async () => {
    const model = regressor(54);
    let stochasticRounding: boolean | undefined;
    const compile = async () => {
      const executor = inferenceModel(model);
      await executor.compile(tf.zeros([2, 5]));
      stochasticRounding = executor.executable.numerics?.stochasticRounding;
      executor.destroy();
    };
    expect(await compilations(compile)).toBe(1);
    expect(stochasticRounding).toBe(false);
    process.env.POPLAR_ENGINE_OPTIONS = '{"prng.enableStochasticRounding":"true"}';
    expect(await compilations(compile)).toBe(1);
    expect(stochasticRounding).toBe(true);
    process.env.POPLAR_ENGINE_OPTIONS = '{"debug.instrument":"true","target.deterministicWorkers":"portable"}';
    expect(await compilations(compile)).toBe(0);
    expect(stochasticRounding).toBe(false);
    process.env.POPLAR_ENGINE_OPTIONS = '{"prng.enableStochasticRounding":"true","debug.instrument":"true"}';
    expect(await compilations(compile)).toBe(0);
    expect(stochasticRounding).toBe(true);
  });

  it('debug.cpuMultiThreadExecution "false" runs every IPU on the main thread, even with Options.parallelIpus', async () => {
    const model = regressor(55);
    BeginBlock(model.layers[0]!, { userId: 'b0' });
    BeginBlock(model.layers[1]!, { userId: 'b1' });
    const options = () =>
      new Options()
        .deviceIterations(2)
        .parallelIpus(true)
        .setExecutionStrategy(PipelinedExecution(Stage('b0').ipu(0), Stage('b1').ipu(1)));
    const x = tf.randomUniform([4, 5], -1, 1, 'float32', 5);
    const threaded = inferenceModel(model, { options: options() });
    const expected = (await threaded(x)) as tf.Tensor;
    expect(threaded.measuredOverlap()).toBeDefined();
    threaded.destroy();
    process.env.POPLAR_ENGINE_OPTIONS = '{"debug.cpuMultiThreadExecution":"false"}';
    const single = inferenceModel(model, { options: options() });
    const output = (await single(x)) as tf.Tensor;
    expect(single.measuredOverlap()).toBeUndefined();
    expect(output.arraySync()).toEqual(expected.arraySync());
    single.destroy();
  }, 120_000);
});
