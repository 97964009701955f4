import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { DeviceManager, Engine, Executable, WORKER_SCRATCH_SIZE, optim, popart, trainingModel } from 'poptfjs';
import { exportedRegressor, handWrittenStep, regressor } from './engine_fixtures.js';

describe('Engine: programs run by index', () => {
  it("lists a training executable's programs as PopART builds them, and its streams with + for host-write and - for host-read", async () => {
    const { path, weightNames } = await exportedRegressor(11, 4);
    const executable = Executable.fromFile(path);
    expect(executable.programs).toEqual([
      { index: 0, name: 'weightsFromHost' },
      { index: 1, name: 'optimizerFromHost' },
      { index: 2, name: 'step' },
      { index: 3, name: 'weightsToHost' },
    ]);
    const engine = new Engine(executable);
    expect(engine.listStreams()).toEqual([
      'input0+',
      'input1+',
      'output0-',
      'loss-',
      ...weightNames.flatMap((name) => [`weightsFromHost/${name}+`, `weightsToHost/${name}-`]),
    ]);
    expect(Engine.WORKER_SCRATCH_SIZE).toBe(48);
    expect(WORKER_SCRATCH_SIZE).toBe(48);
  });

  it('runs the step on connected streams in a fresh engine from an exported file, as hand-written tfjs SGD trains, and reads the weights back', async () => {
    const { path, weightNames } = await exportedRegressor(12, 4);
    const reference = regressor(12);
    const engine = new Engine(Executable.fromFile(path));
    engine.load(new DeviceManager().createIpuModelDevice());
    const x = tf.randomNormal([4, 5], 0, 1, 'float32', 1);
    const y = tf.randomNormal([4, 3], 0, 1, 'float32', 2);
    engine.connectStream('input0', x.dataSync() as Float32Array);
    engine.connectStream('input1', y.dataSync() as Float32Array);
    const output = new Float32Array(12);
    const loss = new Float32Array(1);
    engine.connectStream('output0', output);
    engine.connectStream('loss', loss);
    for (let step = 0; step < 3; step++) {
      const expectedOutput = (reference.predict(x) as tf.Tensor).dataSync();
      const expectedLoss = handWrittenStep(reference, x, y, 0.1);
      engine.run(2, `step ${step}`);
      expect(loss[0]).toBeCloseTo(expectedLoss, 5);
      output.forEach((v, i) => expect(v).toBeCloseTo(expectedOutput[i]!, 5));
    }
    const kernel = new Float32Array(30);
    engine.readTensor(weightNames[0]!, kernel);
    const expected = reference.getWeights()[0]!.dataSync();
    kernel.forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 5));
  });

  it('refuses a program index out of range, a run before load, and an unconnected stream, naming what is wrong', async () => {
    const { path } = await exportedRegressor(13, 2);
    const engine = new Engine(Executable.fromFile(path));
    expect(() => engine.run(0)).toThrow('run: the engine is not loaded; call load(device) first');
    engine.load(new DeviceManager().createIpuModelDevice());
    expect(() => engine.run(4)).toThrow('run(4): the engine has 4 program(s) (0: weightsFromHost, 1: optimizerFromHost, 2: step, 3: weightsToHost)');
    expect(() => engine.run(2)).toThrow("stream 'input0' (+) is not connected; connect it with connectStream or connectStreamToCallback before running");
    expect(() => engine.connectStream('input7', new Float32Array(10))).toThrow(/connectStream: the engine has no stream 'input7'; its streams are input0, input1, /);
    expect(() => engine.connectStream('input0', new Int32Array(10))).toThrow("connectStream('input0'): the stream carries float32; give a Float32Array");
    expect(() => engine.connectStream('input0', new Float32Array(7))).toThrow(
      "connectStream('input0'): a buffer of 7 elements does not hold a whole number of transfers of 10 ([2, 5])",
    );
  });

  it("is what trainingModel and a session run on: executor.engine and session.engine run every step, and keep the executable's programs", async () => {
    const model = regressor(14);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
    expect(() => executor.engine).toThrow('engine: the model is not compiled yet; call compile(...inputs) or run it once');
    await executor(tf.ones([2, 5]), tf.ones([2, 3]));
    const { engine } = executor;
    expect(engine).toBeInstanceOf(Engine);
    expect(engine.executable.programs.map((p) => p.name)).toEqual(['weightsFromHost', 'optimizerFromHost', 'step', 'weightsToHost']);
    const before = engine.getTimeStamp().deviceCycles;
    await executor(tf.ones([2, 5]), tf.ones([2, 3]));
    expect(engine.getTimeStamp().deviceCycles - before).toBe(executor.executable.hardware.timeline.cycles);
    executor.destroy();

    const builder = new popart.Builder();
    const x = builder.addInputTensor('FLOAT', [1, 2], 'x');
    const y = builder.aiOnnx.relu([x]);
    const session = await popart.InferenceSession.create({
      model: builder.getModelProto(),
      dataFlow: new popart.DataFlow(1, { [y]: popart.AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    expect(session.engine).toBeUndefined();
    await session.prepareDevice();
    session.run(new popart.StepIO({ [x]: Float32Array.from([-1, 2]) }, session.initAnchorArrays()), 'first');
    expect(session.engine).toBeInstanceOf(Engine);
    expect(session.engine!.getTimeStamp().deviceCycles).toBe(session.engine!.executable.hardware.timeline.cycles);
  });
});
