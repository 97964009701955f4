import { describe, expect, it } from 'vitest';
import { Options, TensorLocationSettings, optim, tf, trainingModel } from 'poptfjs';
import { regressor } from './engine_fixtures.js';

/** A trained regressor whose weights `TensorLocations` keeps off chip, after one step on `replicas` replicas. */
async function offChipRegressor(seed: number, replicas: number, sharded: boolean) {
  const model = regressor(seed);
  const options = new Options().replicationFactor(replicas);
  options.TensorLocations.setWeightLocation(new TensorLocationSettings().useOnChipStorage(false).useReplicatedTensorSharding(sharded));
  const executor = trainingModel(model, { options, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
  await executor(tf.ones([2 * replicas, 5]), tf.ones([2 * replicas, 3]));
  return { executor, engine: executor.engine, kernel: model.weights[0]!.name, names: model.weights.map((w) => w.name) };
}

describe('Engine: remote buffers', () => {
  it('holds each off-chip weight per replica: copyFromRemoteBuffer reads the device value, copyToRemoteBuffer writes what that replica computes with', async () => {
    const { engine, kernel, names } = await offChipRegressor(61, 2, false);
    expect(engine.executable.remoteBuffers!.map((b) => b.handle)).toEqual(names.map((n) => `weights/${n}`));
    const onDevice = new Float32Array(30);
    engine.readTensor(kernel, onDevice);
    const remote = new Float32Array(30);
    engine.copyFromRemoteBuffer(`weights/${kernel}`, remote, 0, 1);
    expect(remote).toEqual(onDevice);
    engine.copyToRemoteBuffer(new Float32Array(30).fill(0.25), `weights/${kernel}`, 0, 1);
    engine.copyFromRemoteBuffer(`weights/${kernel}`, remote, 0, 1);
    expect(Array.from(remote)).toEqual(new Array(30).fill(0.25));
    // Replica 0 keeps its own copy.
    engine.copyFromRemoteBuffer(`weights/${kernel}`, remote, 0, 0);
    expect(remote).toEqual(onDevice);
    expect(() => engine.copyFromRemoteBuffer(`weights/${kernel}`, remote, 1)).toThrow(
      `copyFromRemoteBuffer('weights/${kernel}'): repeat 1 is out of range; the buffer has 1 repeat (index 0)`,
    );
    expect(() => engine.copyFromRemoteBuffer(`weights/${kernel}`, remote, 0, 2)).toThrow(
      `copyFromRemoteBuffer('weights/${kernel}'): replica 2 is out of range; the engine runs 2 replica(s)`,
    );
    expect(() => engine.copyToRemoteBuffer(new Float32Array(29), `weights/${kernel}`, 0)).toThrow(
      `copyToRemoteBuffer('weights/${kernel}'): the buffer holds 29 elements, but a repeat holds 30`,
    );
    expect(() => engine.copyFromRemoteBuffer('weights/nothing', remote, 0)).toThrow(
      /copyFromRemoteBuffer: the engine has no remote buffer 'weights\/nothing'; its remote buffers are weights\//,
    );
  });

  it('holds a sharded weight as one shard per replica; a written shard changes the weight every replica gathers', async () => {
    const { engine, kernel } = await offChipRegressor(62, 2, true);
    const whole = new Float32Array(30);
    engine.readTensor(kernel, whole);
    const shards = [new Float32Array(15), new Float32Array(15)];
    shards.forEach((shard, r) => engine.copyFromRemoteBuffer(`weights/${kernel}`, shard, 0, r));
    expect([...shards[0]!, ...shards[1]!]).toEqual(Array.from(whole));
    engine.copyToRemoteBuffer(new Float32Array(15), `weights/${kernel}`, 0, 1);
    engine.readTensor(kernel, whole);
    expect(Array.from(whole.subarray(15))).toEqual(new Array(15).fill(0));
    expect(Array.from(whole.subarray(0, 15))).toEqual(Array.from(shards[0]!));
  });

  it('has none for the activations and gradient accumulators it keeps off chip, and says why', async () => {
    const model = regressor(64);
    const options = new Options();
    options.Training.gradientAccumulation(2);
    options.TensorLocations.setActivationLocation(new TensorLocationSettings().useOnChipStorage(false));
    options.TensorLocations.setAccumulatorLocation(new TensorLocationSettings().useOnChipStorage(false));
    const executor = trainingModel(model, { options, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
    await executor(tf.ones([4, 5]), tf.ones([4, 3]));
    expect(executor.engine.executable.remoteBuffers).toBeUndefined();
    expect(() => executor.engine.copyFromRemoteBuffer('activations/x', new Float32Array(1), 0)).toThrow(
      "copyFromRemoteBuffer: the engine has no remote buffer 'activations/x'; it has none. The activations and gradient accumulators it keeps off chip hold no value between runs, so they have no remote buffer; read them with Options.anchorTensor",
    );
    executor.destroy();
  });

  it('has no remote buffer when everything is on chip', async () => {
    const model = regressor(63);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
    await executor(tf.ones([2, 5]), tf.ones([2, 3]));
    expect(executor.engine.executable.remoteBuffers).toBeUndefined();
    expect(() => executor.engine.copyFromRemoteBuffer('weights/x', new Float32Array(1), 0)).toThrow(
      "copyFromRemoteBuffer: the engine has no remote buffer 'weights/x'; it has none (it keeps nothing off chip: Options.TensorLocations)",
    );
  });
});
