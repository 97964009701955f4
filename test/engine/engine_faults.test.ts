import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Block, DeviceManager, Engine, Executable, Options, PoplarRuntimeError, SimulatedErrorCode, compileGraph, optim, trainingModel } from 'poptfjs';
import { exportedRegressor } from './engine_fixtures.js';

/**
 * An engine of a training executable pipelined over two IPUs (F0, F1, B1,
 * B0), and a device of its own to load it on; with `programs`, the
 * executable is compiled again with those programs (compileGraph).
 */
async function twoIpuEngine(programs?: readonly string[]): Promise<{ engine: Engine; device: ReturnType<DeviceManager['createIpuModelDevice']> }> {
  const layers = [0, 1].map((i) => {
    const l = tf.layers.dense({ units: 4, inputShape: [4], kernelInitializer: tf.initializers.glorotUniform({ seed: 40 + i }) });
    l.apply(tf.zeros([1, 4]));
    return l;
  });
  const fn = (x: tf.Tensor) => {
    const h = Block.run({ ipuId: 0 }, () => tf.tanh(layers[0]!.apply(x) as tf.Tensor));
    return Block.run({ ipuId: 1 }, () => layers[1]!.apply(h) as tf.Tensor);
  };
  const variables = layers.flatMap((l) => l.trainableWeights.map((w) => (w as unknown as { val: tf.Variable }).val));
  const options = new Options().useIpuModel(true);
  options.Training.gradientAccumulation(3);
  const executor = trainingModel(fn, { options, loss: 'meanSquaredError', optimizer: new optim.SGD(variables, { lr: 0.1 }) });
  await executor.compile(tf.ones([3, 4]), tf.ones([3, 4]));
  const optimizer = executor.getOptimizer();
  const executable = programs ? compileGraph({ graph: executor.executable.graph, options, optimizer }, programs) : executor.executable;
  const engine = new Engine(executable, {}, { optimizer, hostWeights: new Map(variables.map((v) => [v.name, v])) });
  const device = new DeviceManager().createIpuModelDevice({ numIpus: 2 });
  return { engine, device };
}

/** Connects the step's streams: a micro-batch of one sample, read by each of the 3 accumulation steps from the same place. */
function connectStep(engine: Engine): void {
  engine.connectStream('input0', new Float32Array(4).fill(1));
  engine.connectStream('input1', new Float32Array(4).fill(0.5));
  engine.connectStream('output0', new Float32Array(4));
  engine.connectStream('loss', new Float32Array(1));
}

describe('Engine: simulated errors, with Poplar rules', () => {
  it("runs the insertSimulatedError example of Poplar's Engine reference, line by line", async () => {
    // The step is program 0, the one engine.run() runs; the weights are the host's, loaded with the engine.
    const { engine, device } = await twoIpuEngine(['step', 'weightsFromHost', 'optimizerFromHost', 'weightsToHost']);
    connectStep(engine);
    // const unsigned tile = 0;
    const tile = 0;
    // const poplar::ErrorCode error = poplar::ErrorCode::MEMORY_ERROR;
    const error = SimulatedErrorCode.MEMORY_ERROR;
    // const std::vector<poplar::ErrorLocation> locations = engine.getSimulatedErrorLocations("MyComputeVertex", tile);
    const locations = engine.getSimulatedErrorLocations('BatchMatMul', tile);
    const location = locations[0]!;
    // engine.load(device);
    engine.load(device);
    // engine.insertSimulatedError(error, locations[0]);
    engine.insertSimulatedError(error, locations[0]!);
    // try { engine.run(); } catch (poplar::runtime_error const& exception) { ... }
    let caught: unknown;
    try {
      engine.run();
    } catch (exception) {
      caught = exception;
      expect(exception).toBeInstanceOf(PoplarRuntimeError);
      const { errors } = exception as PoplarRuntimeError;
      // assert(exception.errors.size() == 1);
      expect(errors.length).toBe(1);
      // assert(exception.errors[0].isSimulated);
      expect(errors[0]!.isSimulated).toBe(true);
      // assert(exception.errors[0].code == error);
      expect(errors[0]!.code).toBe(error);
      // assert(exception.errors[0].location == location);
      expect(errors[0]!.location).toBe(location);
      // std::cerr << "ErrorCode: " << exception.what() << '\n';
      expect(`ErrorCode: ${(exception as Error).message}`).toBe('ErrorCode: simulated MEMORY_ERROR at BatchMatMul on IPU 0, tile 0: the device must be taken out of service');
    }
    expect(caught).toBeDefined();
  });

  it('refuses an error before load and a second one at the same location; erases, clears, and recovers by loading again', async () => {
    const { engine, device } = await twoIpuEngine();
    connectStep(engine);
    const step = engine.programIndex('step');
    const [b1] = engine.getSimulatedErrorLocations('B1');
    expect(() => engine.insertSimulatedError(SimulatedErrorCode.IPU_RESET, b1!)).toThrow('insertSimulatedError: the engine is not loaded; call load(device) first');
    engine.load(device);
    engine.run(engine.programIndex('weightsFromHost'));
    engine.insertSimulatedError(SimulatedErrorCode.IPU_RESET, b1!);
    expect(() => engine.insertSimulatedError(SimulatedErrorCode.LINK_RESET, b1!)).toThrow(/an error is already simulated at B1 on IPU 1, tile 1472/);
    engine.eraseSimulatedError(b1!);
    expect(() => engine.eraseSimulatedError(b1!)).toThrow(/no error is simulated at B1 on IPU 1/);
    engine.insertSimulatedError(SimulatedErrorCode.IPU_RESET, b1!);
    const fault = (() => {
      try {
        engine.run(step);
      } catch (e) {
        return e as PoplarRuntimeError;
      }
      return undefined;
    })();
    expect(fault?.errors).toEqual([{ code: 'IPU_RESET', isSimulated: true, location: b1 }]);
    expect(() => engine.run(step)).toThrow(/needs IPU_RESET after a fault/);
    // engine.clearSimulatedErrors(); engine.load(); engine.run(); // won't hit any simulated errors.
    engine.insertSimulatedError(SimulatedErrorCode.LINK_RESET, engine.getSimulatedErrorLocations('F0')[0]!);
    engine.clearSimulatedErrors();
    engine.load();
    engine.run(engine.programIndex('weightsFromHost'));
    expect(() => engine.run(step)).not.toThrow();
  });

  it('gives the locations of a program by id (the step stage programs, in order) or by vertex name, per IPU or tile, and refuses unknown ones', async () => {
    const { engine } = await twoIpuEngine();
    expect(engine.getSimulatedErrorLocations(0)).toEqual([{ program: 'F0', ipu: 0, tile: 0 }]);
    expect(engine.getSimulatedErrorLocations('F1')).toEqual([{ program: 'F1', ipu: 1, tile: 1472 }]);
    expect(engine.getSimulatedErrorLocations('F1', 1500)).toEqual([{ program: 'F1', ipu: 1, tile: 1500 }]);
    expect(engine.getSimulatedErrorLocations('F1', 3)).toEqual([]);
    expect(engine.getSimulatedErrorLocations('BatchMatMul').map((l) => l.ipu)).toEqual([0, 1]);
    expect(() => engine.getSimulatedErrorLocations(9)).toThrow(/getSimulatedErrorLocations\(9\): the program ids are 0\.\.3 \(0: F0, 1: F1, 2: B1, 3: B0\)/);
    expect(() => engine.getSimulatedErrorLocations('Conv2D')).toThrow(/the executable runs no program or vertex 'Conv2D'; it runs F0, /);
    expect(() => engine.getSimulatedErrorLocations('F0', 2944)).toThrow('getSimulatedErrorLocations: tile 2944 is not on the device; its tiles are 0..2943');
  });

  it('an exported executable loaded alone faults and recovers as the seed describes', async () => {
    const { path } = await exportedRegressor(21, 2);
    const engine = new Engine(Executable.fromFile(path));
    const device = new DeviceManager().createIpuModelDevice();
    engine.load(device);
    connectStep2(engine);
    engine.insertSimulatedError(SimulatedErrorCode.FULL_RESET, engine.getSimulatedErrorLocations('F0')[0]!);
    expect(() => engine.run(2)).toThrow('simulated FULL_RESET at F0 on IPU 0, tile 0: recover with FULL_RESET');
    engine.clearSimulatedErrors();
    engine.load();
    expect(() => engine.run(2)).not.toThrow();
  });
});

function connectStep2(engine: Engine): void {
  engine.connectStream('input0', new Float32Array(10).fill(1));
  engine.connectStream('input1', new Float32Array(6).fill(0.5));
  engine.connectStream('output0', new Float32Array(6));
  engine.connectStream('loss', new Float32Array(1));
}
