import * as tf from '@tensorflow/tfjs';
import { describe, expect, it, vi } from 'vitest';
import { Block, Options, getLogger, inferenceModel, ops, trainingModel } from 'poptfjs';

const double = (x: tf.Tensor) => tf.mul(x, 2);

function twoIpuModel() {
  return (x: tf.Tensor) =>
    Block.run({ ipuId: 1 }, () =>
      tf.mul(
        Block.run({ ipuId: 0 }, () => tf.add(x, 1)),
        3,
      ),
    );
}

// PopTorch: each model acquires the next available IPU, so models wrapped in one process run on IPUs 0, 1, 2, ...
describe('several executors in one process', () => {
  it('take IPUs 0, 1, 2 in turn, a freed IPU first again, and groups none of whose IPUs is in use', async () => {
    const w = tf.variable(tf.ones([1]), true, 'executor_ipus_w');
    const a = inferenceModel(double);
    const b = inferenceModel(double);
    const c = trainingModel((x: tf.Tensor) => ops.identityLoss(tf.sum(tf.mul(x, w)), 'sum'));
    await a.compile(tf.ones([1]));
    await b.compile(tf.ones([1]));
    await c.compile(tf.ones([1]));
    expect([a.device.ipus, b.device.ipus, c.device.ipus]).toEqual([[0], [1], [2]]);
    expect([a.device.id, b.device.id, c.device.id]).toEqual([0, 1, 2]);

    a.destroy();
    const d = inferenceModel(double);
    await d.compile(tf.ones([1]));
    expect(d.device.ipus).toEqual([0]);

    // IPUs 0, 1, 2 are in use: the pairs [0, 1] and [2, 3] are not available, [4, 5] is (device 18 of 16 IPUs).
    const pair = inferenceModel(twoIpuModel(), { options: new Options().deviceIterations(2) });
    await pair.compile(tf.ones([2, 1]));
    expect([pair.device.id, pair.device.ipus]).toEqual([18, [4, 5]]);
    expect(Array.from(((await pair(tf.tensor2d([[1], [2]]))) as tf.Tensor).dataSync())).toEqual([6, 9]);
    for (const executor of [b, c, d, pair]) executor.destroy();
  });

  it('share the first device, logged at info, when this process has attached every device of that size', async () => {
    process.env.POPTFJS_NUM_IPUS = '2';
    const logger = getLogger('devicex');
    const level = logger.getLevel();
    logger.setLevel('INFO');
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    try {
      const executors = [0, 1, 2].map(() => inferenceModel(double));
      for (const executor of executors) await executor.compile(tf.ones([1]));
      expect(executors.map((e) => e.device.ipus)).toEqual([[0], [1], [0]]);
      expect(lines.join('')).toContain('every device of 1 IPU(s) is attached in this process: sharing device 0 (IPUs 0)');
      expect(Array.from(((await executors[2]!(tf.tensor1d([4]))) as tf.Tensor).dataSync())).toEqual([8]);
      for (const executor of executors) executor.destroy();
    } finally {
      spy.mockRestore();
      logger.setLevel(level);
      delete process.env.POPTFJS_NUM_IPUS;
    }
  });
});
