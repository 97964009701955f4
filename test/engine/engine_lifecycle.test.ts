import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { DeviceManager, Engine, Executable, PoplarException, inferenceModel } from 'poptfjs';
import { exportedRegressor, regressor } from './engine_fixtures.js';

/** The regressor's step streams connected to buffers of one host batch of 2 (ones in, halves as labels); returns the loss buffer. */
function connectStep(engine: Engine): Float32Array {
  engine.connectStream('input0', new Float32Array(10).fill(1));
  engine.connectStream('input1', new Float32Array(6).fill(0.5));
  engine.connectStream('output0', new Float32Array(6));
  const loss = new Float32Array(1);
  engine.connectStream('loss', loss);
  return loss;
}

/** A text sink that keeps what is written. */
function sink(): { text: string; write(t: string): void } {
  return {
    text: '',
    write(t: string) {
      this.text += t;
    },
  };
}

describe('Engine: construction, loading and tensors', () => {
  it('compiles a graph and its programs in the constructor, reporting progress; a single program is program 0, which run() runs', async () => {
    const model = regressor(16);
    const inference = inferenceModel(model);
    await inference.compile(tf.zeros([2, 5]));
    const { graph } = inference.executable;
    const x = tf.randomNormal([2, 5], 0, 1, 'float32', 3);
    const expected = (model.predict(x) as tf.Tensor).dataSync();
    const weights = new Map(model.weights.map((w) => [w.name, w.read().dataSync() as Float32Array]));

    const progress: Array<[number, number]> = [];
    const engine = new Engine({ graph, modelName: 'regressor' }, ['weightsFromHost', 'step'], { 'prng.seed': '3' }, (done, total) => progress.push([done, total]));
    expect(progress).toEqual([
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
    ]);
    expect(engine.executable.programs).toEqual([
      { index: 0, name: 'weightsFromHost' },
      { index: 1, name: 'step' },
    ]);
    expect(engine.getEngineOptions()).toEqual({ 'prng.seed': '3' });
    engine.load(new DeviceManager().createIpuModelDevice());
    for (const [name, data] of weights) engine.connectStream(`weightsFromHost/${name}`, data);
    engine.run(0);
    engine.connectStream('input0', x.dataSync() as Float32Array);
    const output = new Float32Array(6);
    engine.connectStream('output0', output);
    engine.run(1);
    output.forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 5));

    const single = new Engine({ graph }, 'step');
    expect(single.executable.programs).toEqual([{ index: 0, name: 'step' }]);
    single.load(new DeviceManager().createIpuModelDevice());
    single.connectStream('input0', x.dataSync() as Float32Array);
    const alone = new Float32Array(6);
    single.connectStream('output0', alone);
    const [first] = weights.keys();
    expect(() => single.run()).toThrow(`run: weight '${first}' has no value on the device yet; run weightsFromHost or writeTensor('${first}', ...) first`);
    for (const [name, data] of weights) single.writeTensor(name, data);
    single.run();
    expect([...alone]).toEqual([...output]);
    inference.destroy();
  });

  it('deploys only a prepared engine; loadAndRun loads and runs a program (default 0) as load then run do', async () => {
    const { path } = await exportedRegressor(17, 2);
    const device = new DeviceManager().createIpuModelDevice();
    const engine = new Engine(Executable.fromFile(path));
    expect(() => engine.deploy()).toThrow('deploy: the engine is not prepared; call load(device) (or prepare(device) and deploy()) first');
    engine.prepare(device);
    expect(engine.isLoaded).toBe(false);
    engine.deploy();
    expect(engine.isLoaded).toBe(true);
    expect(() => engine.deploy()).toThrow('deploy: the engine is already loaded');
    const loss = connectStep(engine);
    engine.run(2);

    const other = new Engine(Executable.fromFile(path));
    const otherLoss = connectStep(other);
    other.loadAndRun(new DeviceManager().createIpuModelDevice(), 2);
    expect(otherLoss[0]).toBe(loss[0]);
    expect(other.getTimeStamp().deviceCycles).toBe(other.executable.hardware.timeline.cycles);
    // Program 0 is weightsFromHost: 57 float32 weights over the host link, 56 cycles (engine_profile.test.ts).
    const third = new Engine(Executable.fromFile(path));
    third.loadAndRun(new DeviceManager().createIpuModelDevice());
    expect(third.getTimeStamp().deviceCycles).toBe(56);
    expect(() => third.loadAndRun(new DeviceManager().createIpuModelDevice(), 7)).toThrow(/run\(7\): the engine has 4 program\(s\)/);
  });

  it('writes and reads a weight through a buffer of its dtype and exact size, and refuses others naming what is expected', async () => {
    const { path, weightNames } = await exportedRegressor(18, 2);
    const engine = new Engine(Executable.fromFile(path));
    const kernel = weightNames[0]!;
    expect(() => engine.readTensor(kernel, new Float32Array(30))).toThrow('readTensor: the engine is not loaded; call load(device) first');
    engine.load(new DeviceManager().createIpuModelDevice());
    const written = Float32Array.from({ length: 30 }, (_, i) => i / 8);
    engine.writeTensor(kernel, written);
    const read = new Float32Array(30);
    engine.readTensor(kernel, read);
    expect([...read]).toEqual([...written]);
    expect(() => engine.writeTensor(kernel, new Float32Array(29))).toThrow(`writeTensor('${kernel}'): the buffer holds 29 elements, but the tensor has 30 ([5, 6])`);
    expect(() => engine.readTensor(kernel, new Float32Array(31))).toThrow(`readTensor('${kernel}'): the buffer holds 31 elements, but the tensor has 30 ([5, 6])`);
    expect(() => engine.readTensor(kernel, new Int32Array(30))).toThrow(`readTensor('${kernel}'): the tensor is float32; give a Float32Array`);
    expect(() => engine.readTensor('nothing', read)).toThrow(/readTensor\('nothing'\): no such tensor; the tensors are the weights \(/);
    // A failed write leaves the tensor as it was.
    engine.readTensor(kernel, read);
    expect([...read]).toEqual([...written]);
  });

  it('refuses profiles on a CPU device (profiling_disabled), as Poplar does', async () => {
    const { path } = await exportedRegressor(19, 2);
    const engine = new Engine(Executable.fromFile(path), { 'debug.instrument': 'true' });
    engine.load(new DeviceManager().createCpuDevice());
    connectStep(engine);
    engine.run(2);
    for (const [what, call] of [
      ['getReport', () => engine.getReport()],
      ['printProfileSummary', () => engine.printProfileSummary(sink())],
      ['reportIntervals', () => engine.reportIntervals(sink())],
    ] as const) {
      let error: unknown;
      try {
        call();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(PoplarException);
      expect((error as PoplarException).message).toBe(`${what}: profiling is not available on a CPU device`);
      expect((error as PoplarException).type).toBe('profiling_disabled');
    }
  });
});
