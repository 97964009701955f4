import * as tf from '@tensorflow/tfjs';
import { describe, expect, it, vi } from 'vitest';
import { Block, Options, RecoverableError, SimulatedErrorCode, UnrecoverableError, optim, trainingModel } from 'poptfjs';
import { variableOf } from '../helpers.js';

function model(seed: number) {
  const layers = [0, 1].map((i) => {
    const l = tf.layers.dense({ units: 4, inputShape: [4], kernelInitializer: tf.initializers.glorotUniform({ seed: seed + i }) });
    l.apply(tf.zeros([1, 4]));
    return l;
  });
  const fn = (x: tf.Tensor) => {
    const h = Block.run({ ipuId: 0 }, () => tf.tanh(layers[0]!.apply(x) as tf.Tensor));
    return Block.run({ ipuId: 1 }, () => layers[1]!.apply(h) as tf.Tensor);
  };
  return { fn, layers };
}

async function trainer(seed: number) {
  const { fn, layers } = model(seed);
  const opts = new Options();
  opts.Training.gradientAccumulation(3);
  const executor = trainingModel(fn, {
    options: opts,
    loss: 'meanSquaredError',
    optimizer: new optim.SGD(
      layers.flatMap((l) => l.trainableWeights.map(variableOf)),
      { lr: 0.1 },
    ),
  });
  await executor.compile(tf.ones([3, 4]), tf.ones([3, 4]));
  return { executor, layers };
}

describe('simulated faults', () => {
  it('lists the locations of a program on the device, by unit or kernel, per IPU or tile', async () => {
    const { executor } = await trainer(1);
    const device = executor.device;
    expect(device.getSimulatedErrorLocations('F1')).toEqual([{ program: 'F1', ipu: 1, tile: 1472 }]);
    expect(device.getSimulatedErrorLocations('F1', 1500)).toEqual([{ program: 'F1', ipu: 1, tile: 1500 }]);
    expect(device.getSimulatedErrorLocations('F1', 3)).toEqual([]);
    expect(device.getSimulatedErrorLocations('BatchMatMul').map((l) => l.ipu)).toEqual([0, 1]);
    expect(() => device.getSimulatedErrorLocations('NoSuchProgram')).toThrow(/no program 'NoSuchProgram' is loaded on device \d+; loaded: F0, /);
  });

  it('throws a RecoverableError with its recovery action where the run reaches the fault, until the device is recovered', async () => {
    const { executor } = await trainer(2);
    const device = executor.device;
    const [location] = device.getSimulatedErrorLocations('B1');
    device.insertSimulatedError(SimulatedErrorCode.IPU_RESET, location!);
    expect(() => device.insertSimulatedError(SimulatedErrorCode.IPU_RESET, location!)).toThrow(/an error is already simulated at B1 on IPU 1/);
    const error = await executor(tf.ones([3, 4]), tf.ones([3, 4])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecoverableError);
    expect((error as RecoverableError).recoveryAction).toBe('IPU_RESET');
    expect((error as RecoverableError).message).toBe('simulated IPU_RESET at B1 on IPU 1, tile 1472: recover with IPU_RESET');
    await expect(executor(tf.ones([3, 4]), tf.ones([3, 4]))).rejects.toThrow(/needs IPU_RESET after a fault: call detachFromDevice\(\) and attachToDevice\(\)/);
    expect(() => executor.copyWeightsToHost()).toThrow(/lost its weights in a fault/);
    executor.detachFromDevice();
    expect(executor.isAttachedToDevice()).toBe(false);
    executor.attachToDevice();
    const [, loss] = await executor(tf.ones([3, 4]), tf.ones([3, 4]));
    expect(Number.isFinite(loss.dataSync()[0])).toBe(true);
  });

  it('after a fault, the host model keeps the weights last copied: reading it warns, recovering with detach and attach does not', async () => {
    const stderr: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (stderr.push(String(chunk)), true));
    try {
      for (const read of [true, false]) {
        const { executor, layers } = await trainer(6);
        const initial = layers[0]!.getWeights()[0]!.dataSync().slice();
        await executor(tf.ones([3, 4]), tf.ones([3, 4]));
        executor.device.insertSimulatedError(SimulatedErrorCode.IPU_RESET, executor.device.getSimulatedErrorLocations('B0')[0]!);
        await expect(executor(tf.ones([3, 4]), tf.ones([3, 4]))).rejects.toBeInstanceOf(RecoverableError);
        stderr.length = 0;
        if (read) {
          expect(Array.from(layers[0]!.getWeights()[0]!.dataSync())).toEqual(Array.from(initial));
          expect(stderr.join('')).toMatch(
            /W: the device of '.*' lost its weights in a fault \(recover with IPU_RESET\); the host model keeps the weights last copied from it\n$/,
          );
        } else {
          executor.detachFromDevice();
          executor.attachToDevice();
          expect(Array.from(layers[0]!.getWeights()[0]!.dataSync())).toEqual(Array.from(initial));
          expect(stderr).toEqual([]);
        }
        executor.destroy();
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('throws an UnrecoverableError for a memory error, and the device cannot be attached again', async () => {
    const { executor } = await trainer(3);
    const device = executor.device;
    device.insertSimulatedError(SimulatedErrorCode.MEMORY_ERROR, device.getSimulatedErrorLocations('F0')[0]!);
    await expect(executor(tf.ones([3, 4]), tf.ones([3, 4]))).rejects.toBeInstanceOf(UnrecoverableError);
    executor.detachFromDevice();
    expect(() => executor.attachToDevice()).toThrow(UnrecoverableError);
  });

  it('can erase and clear planted faults', async () => {
    const { executor } = await trainer(4);
    const device = executor.device;
    const [a] = device.getSimulatedErrorLocations('F0');
    const [b] = device.getSimulatedErrorLocations('F1');
    device.insertSimulatedError(SimulatedErrorCode.LINK_RESET, a!);
    device.insertSimulatedError(SimulatedErrorCode.FULL_RESET, b!);
    device.eraseSimulatedError(a!);
    expect(() => device.eraseSimulatedError(a!)).toThrow(/no error is simulated at F0 on IPU 0/);
    device.clearSimulatedErrors();
    await expect(executor(tf.ones([3, 4]), tf.ones([3, 4]))).resolves.toBeDefined();
  });

  it('a detached executor attaches again on its next call, as PopTorch does, and keeps training where it was', async () => {
    const { executor, layers } = await trainer(5);
    const reference = await trainer(5);
    const x = tf.randomNormal([3, 4], 0, 1, 'float32', 9);
    const y = tf.randomNormal([3, 4], 0, 1, 'float32', 10);
    await executor(x, y);
    await reference.executor(x, y);
    executor.detachFromDevice();
    expect(executor.isAttachedToDevice()).toBe(false);
    await executor(x, y);
    expect(executor.isAttachedToDevice()).toBe(true);
    await reference.executor(x, y);
    executor.copyWeightsToHost();
    reference.executor.copyWeightsToHost();
    layers.forEach((l, i) => expect(Array.from(l.getWeights()[0]!.dataSync())).toEqual(Array.from(reference.layers[i]!.getWeights()[0]!.dataSync())));
  });
});
