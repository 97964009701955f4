import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Block, DeviceManager, Options, inferenceModel } from 'poptfjs';

const double = (x: tf.Tensor) => tf.mul(x, 2);

function twoIpuModel() {
  return (x: tf.Tensor) => {
    const h = Block.run({ ipuId: 0 }, () => tf.add(x, 1));
    return Block.run({ ipuId: 1 }, () => tf.mul(h, 3));
  };
}

describe('executors and devices', () => {
  it('attach to simulated IPUs at compile by default, and release them on destroy', async () => {
    const executor = inferenceModel(twoIpuModel(), { options: new Options().deviceIterations(2) });
    await executor.compile(tf.ones([2, 1]));
    expect(executor.device.kind).toBe('Ipu');
    expect(executor.device.numIpus).toBe(2);
    expect(executor.isAttachedToDevice()).toBe(true);
    executor.destroy();
    expect(executor.isAttachedToDevice()).toBe(false);
  });

  it('attach on demand at the first run with ConnectionType.OnDemand', async () => {
    const executor = inferenceModel(double, { options: new Options().connectionType('OnDemand') });
    await executor.compile(tf.ones([1]));
    expect(executor.isAttachedToDevice()).toBe(false);
    await executor(tf.ones([1]));
    expect(executor.isAttachedToDevice()).toBe(true);
  });

  it('compile only for an offline target or ConnectionType.Never', async () => {
    for (const opts of [new Options().useOfflineIpuTarget(), new Options().connectionType('Never')]) {
      const executor = inferenceModel(double, { options: opts });
      await executor.compile(tf.ones([1]));
      expect(executor.device.kind).toBe('OfflineIpu');
      await expect(executor(tf.ones([1]))).rejects.toThrow(/compiled for an offline IPU target .* it can be compiled and exported, not run/);
    }
  });

  it('run on the IPU Model with useIpuModel, and on the device chosen with useIpuId', async () => {
    const model = inferenceModel(double, { options: new Options().useIpuModel(true) });
    await model.compile(tf.ones([1]));
    expect(model.device.kind).toBe('IpuModel');
    const chosen = inferenceModel(double, { options: new Options().useIpuId(5) });
    await chosen.compile(tf.ones([1]));
    expect([chosen.device.id, chosen.device.ipus]).toEqual([5, [5]]);
    const tooSmall = inferenceModel(twoIpuModel(), { options: new Options().deviceIterations(2).useIpuId(3) });
    await expect(tooSmall.compile(tf.ones([2, 1]))).rejects.toThrow('useIpuId(3): device 3 has 1 IPU(s), but the model needs 2');
  });

  it('take different IPUs for different executors of this process, as PopTorch models do', async () => {
    const a = inferenceModel(double);
    const b = inferenceModel(double);
    await a.compile(tf.ones([1]));
    await b.compile(tf.ones([1]));
    expect(a.device.ipus).not.toEqual(b.device.ipus);
    expect(new DeviceManager().enumerateDevices()[a.device.id]!.heldBy).toEqual([]);
  });
});
