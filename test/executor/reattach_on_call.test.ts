import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { ConnectionType, Options, RecoverableError, SimulatedErrorCode, inferenceModel } from 'poptfjs';

/** An inference executor of x · w with w = 1, and its weight. */
function scaler(name: string, options: Options) {
  const w = tf.variable(tf.ones([1]), true, name);
  return { w, executor: inferenceModel((x: tf.Tensor) => tf.mul(x, w), { options }) };
}

// PopTorch's PoplarExecutor.__call__: "if not self._is_attached: self.attachToDevice()", which uploads the host weights.
describe('a detached executor', () => {
  for (const connectionType of [ConnectionType.Always, ConnectionType.OnDemand]) {
    it(`attaches again on its next call under ConnectionType.${connectionType}, loading the host weights`, async () => {
      const { w, executor } = scaler(`reattach_${connectionType}_w`, new Options().connectionType(connectionType));
      expect(Array.from(((await executor(tf.tensor1d([3]))) as tf.Tensor).dataSync())).toEqual([3]);
      executor.detachFromDevice();
      expect(executor.isAttachedToDevice()).toBe(false);
      w.assign(tf.tensor1d([5]));
      expect(Array.from(((await executor(tf.tensor1d([3]))) as tf.Tensor).dataSync())).toEqual([15]);
      expect(executor.isAttachedToDevice()).toBe(true);
      executor.destroy();
    });
  }

  it('recovers from a fault on its next call once detached', async () => {
    const { executor } = scaler('reattach_fault_w', new Options());
    await executor.compile(tf.tensor1d([1]));
    const device = executor.device;
    device.insertSimulatedError(SimulatedErrorCode.IPU_RESET, device.getSimulatedErrorLocations('F0')[0]!);
    await expect(executor(tf.tensor1d([2]))).rejects.toBeInstanceOf(RecoverableError);
    await expect(executor(tf.tensor1d([2]))).rejects.toThrow(/needs IPU_RESET after a fault: call detachFromDevice\(\) and attachToDevice\(\)/);
    executor.detachFromDevice();
    expect(Array.from(((await executor(tf.tensor1d([2]))) as tf.Tensor).dataSync())).toEqual([2]);
    executor.destroy();
  });

  it('is never attached under ConnectionType.Never, which compiles only', async () => {
    const { executor } = scaler('reattach_never_w', new Options().connectionType(ConnectionType.Never));
    await executor.compile(tf.tensor1d([1]));
    expect(executor.isAttachedToDevice()).toBe(false);
    await expect(executor(tf.tensor1d([1]))).rejects.toThrow(
      'the model was compiled for an offline IPU target (useOfflineIpuTarget or ConnectionType.Never): it can be compiled and exported, not run',
    );
  });
});
