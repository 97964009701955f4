import { afterEach, describe, expect, it } from 'vitest';
import { Engine, Executable, compileGraph, inferenceModel, tf } from 'poptfjs';
import { exportedRegressor, regressor } from './engine_fixtures.js';

describe('Engine options', () => {
  afterEach(() => {
    delete process.env.POPLAR_ENGINE_OPTIONS;
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
});
