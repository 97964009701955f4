import { afterEach, describe, expect, it } from 'vitest';
import { DeviceManager, Engine, Executable, PoplarRuntimeError, RuntimeOptions } from 'poptfjs';
import { exportedRegressor } from './engine_fixtures.js';

/** Keeps the main thread busy for `ms` milliseconds, as a slow host callback does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  let spins = 0;
  while (performance.now() < until) spins++;
  expect(spins).toBeGreaterThan(0);
}

/**
 * An engine of the regressor's training executable (host batches of 2) with
 * `options`, not loaded; `slow` makes the callback of input `input1` keep the
 * device waiting 1.2 s at its host sync on the next run.
 */
async function engineWithSlowCallback(seed: number, options: Record<string, string> = {}) {
  const { path } = await exportedRegressor(seed, 2);
  const engine = new Engine(Executable.fromFile(path), options);
  let slow = false;
  const connect = () => {
    engine.connectStream('input0', new Float32Array(10).fill(1));
    engine.connectStreamToCallback('input1', (buffer) => {
      if (slow) busy(1200);
      slow = false;
      buffer.fill(0.5);
    });
    engine.connectStream('output0', new Float32Array(6));
    engine.connectStream('loss', new Float32Array(1));
  };
  const weights = () => {
    const w = new Float32Array(30);
    engine.readTensor(firstKernel(engine), w);
    return [...w];
  };
  return { engine, connect, slowNext: () => (slow = true), weights };
}

/** The name of the regressor's first kernel (5×6) on the engine. */
function firstKernel(engine: Engine): string {
  const source = engine.executable.graph.values.find((v) => v.source.kind === 'param' && v.shape.join() === '5,6')!.source;
  return source.kind === 'param' ? source.name : '';
}

const TIMED_OUT = /run: the device waited \d+\.\d\d s at a host sync for the callback of stream 'input1', longer than target\.hostSyncTimeout \(1 s\)/;

describe('Runtime options', () => {
  afterEach(() => {
    delete process.env.POPLAR_RUNTIME_OPTIONS;
    delete process.env.POPLAR_ENGINE_OPTIONS;
  });

  it('are checked by name and value when made, and the callback-threading ones refuse what this runtime cannot do, saying why', () => {
    expect(new RuntimeOptions({ 'target.hostSyncTimeout': '30', 'streamCallbacks.maxLookahead': 'unlimited' }).flags).toEqual({
      'target.hostSyncTimeout': '30',
      'streamCallbacks.maxLookahead': 'unlimited',
    });
    expect(() => new RuntimeOptions({ 'target.hostSyncTimeout': 'soon' })).toThrow(`RuntimeOptions['target.hostSyncTimeout'] is 'soon'; expected a non-negative integer`);
    expect(() => new RuntimeOptions({ 'target.hostSync': '3' })).toThrow(
      "RuntimeOptions: 'target.hostSync' is not a Poplar runtime option; the options are target.hostSyncTimeout, streamCallbacks.maxLookahead, streamCallbacks.multiThreadMode, streamCallbacks.numWorkerThreads, streamCallbacks.numaAware",
    );
    expect(() => new RuntimeOptions({ 'streamCallbacks.multiThreadMode': 'collaborative' })).toThrow(
      `RuntimeOptions['streamCallbacks.multiThreadMode'] is 'collaborative', but stream callbacks are JavaScript functions, which run on the main thread; only "none" is possible`,
    );
    expect(() => new RuntimeOptions({ 'streamCallbacks.maxLookahead': '2' })).toThrow(
      `RuntimeOptions['streamCallbacks.maxLookahead'] is '2', but the runtime fetches every input transfer of a step before the step runs; only "unlimited" is possible`,
    );
    expect(() => new RuntimeOptions({ 'streamCallbacks.multiThreadMode': 'parallel' })).toThrow('expected one of none, collaborative, dedicated');
  });

  it('are engine options too, the defaults of its runs, reported by getEngineOptions and checked the same way', async () => {
    const { path } = await exportedRegressor(61, 2);
    const executable = Executable.fromFile(path);
    expect(new Engine(executable, { 'target.hostSyncTimeout': '5' }).getEngineOptions()).toEqual({ 'target.hostSyncTimeout': '5' });
    expect(() => new Engine(executable, { 'target.hostSyncTimeout': '-5' })).toThrow(`Engine options['target.hostSyncTimeout'] is '-5'; expected a non-negative integer`);
    process.env.POPLAR_ENGINE_OPTIONS = '{"streamCallbacks.numWorkerThreads":"auto"}';
    expect(() => new Engine(executable)).toThrow(
      `POPLAR_ENGINE_OPTIONS:1:1: POPLAR_ENGINE_OPTIONS['streamCallbacks.numWorkerThreads'] is 'auto', but stream callbacks are JavaScript functions`,
    );
  });

  it("fail a run whose stream callback keeps the device waiting past target.hostSyncTimeout: the engine's default, prepare's and run's over it, the environment's over all", async () => {
    const { engine, connect, slowNext, weights } = await engineWithSlowCallback(62, { 'target.hostSyncTimeout': '1' });
    const device = new DeviceManager().createIpuModelDevice();
    engine.load(device);
    connect();
    engine.run(0);
    const before = weights();
    // The engine's own default: the step fails before it runs, leaving the weights as they were.
    slowNext();
    const error = (() => {
      try {
        engine.run(2);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(PoplarRuntimeError);
    expect((error as Error).message).toMatch(TIMED_OUT);
    expect(weights()).toEqual(before);
    // A run's own options override it for that run only.
    slowNext();
    engine.run(2, 'patient', new RuntimeOptions({ 'target.hostSyncTimeout': '0' }));
    expect(weights()).not.toEqual(before);
    slowNext();
    expect(() => engine.run(2)).toThrow(TIMED_OUT);
    // prepare's options hold for every run after it; a run's override them.
    const prepared = await engineWithSlowCallback(63, { 'target.hostSyncTimeout': '1' });
    prepared.engine.prepare(new DeviceManager().createIpuModelDevice(), new RuntimeOptions({ 'target.hostSyncTimeout': '10' }));
    prepared.engine.deploy();
    prepared.connect();
    prepared.engine.run(0);
    prepared.slowNext();
    prepared.engine.run(2);
    prepared.slowNext();
    expect(() => prepared.engine.run(2, 'hasty', new RuntimeOptions({ 'target.hostSyncTimeout': '1' }))).toThrow(TIMED_OUT);
    // POPLAR_RUNTIME_OPTIONS overrides them all.
    process.env.POPLAR_RUNTIME_OPTIONS = '{"target.hostSyncTimeout":"1"}';
    prepared.slowNext();
    expect(() => prepared.engine.run(2, 'overridden', new RuntimeOptions({ 'target.hostSyncTimeout': '0' }))).toThrow(TIMED_OUT);
    process.env.POPLAR_RUNTIME_OPTIONS = '{"target.hostSyncTimeout":"soon"}';
    expect(() => prepared.engine.run(2)).toThrow(`POPLAR_RUNTIME_OPTIONS:1:1: POPLAR_RUNTIME_OPTIONS['target.hostSyncTimeout'] is 'soon'; expected a non-negative integer`);
  }, 60_000);
});
