/**
 * `OutputMode.EveryN` is refused for a model pipelined over several IPUs, as
 * PopART refuses it (popx/irlowering.cpp: "AnchorReturnType::EVERYN is not
 * valid for pipelined models"; PopTorch's PipelinedExecution turns
 * pipelining on when the model uses more than one IPU), and runs sharded.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Block, Options, OutputMode, PoptfjsError, ShardedExecution, inferenceModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

/** x·2 on IPU 0, then +1 on IPU 1. */
const twoIpus = (x: tf.Tensor) =>
  Block.run({ ipuId: 1 }, () =>
    tf.add(
      Block.run({ ipuId: 0 }, () => tf.mul(x, 2)),
      1,
    ),
  );
const x = tf.tensor2d([1, 2, 3, 4], [4, 1]);

describe('OutputMode.EveryN and pipelining', () => {
  it('is refused for the outputs and for anchors of a model pipelined over two IPUs', async () => {
    const outputs = inferenceModel(twoIpus, { options: new Options().deviceIterations(4).outputMode(OutputMode.EveryN, 2) });
    const error = await outputs.compile(x).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PoptfjsError);
    expect((error as Error).message).toBe(
      'OutputMode.EveryN is not valid for pipelined models (the outputs (Options.outputMode)): the model is pipelined over 2 IPUs; use OutputMode.All, Final or Sum, or ShardedExecution',
    );
    expect(outputs.isCompiled()).toBe(false);
    outputs.destroy();

    const anchored = inferenceModel(twoIpus, { options: new Options().deviceIterations(4).anchorTensor('every', 'input0', OutputMode.EveryN, 2) });
    await expect(anchored.compile(x)).rejects.toThrow("OutputMode.EveryN is not valid for pipelined models (anchored tensor 'every')");
    anchored.destroy();
  });

  it('returns every N-th iteration when the same model runs sharded, or on one IPU', async () => {
    const sharded = inferenceModel(twoIpus, { options: new Options().deviceIterations(4).outputMode(OutputMode.EveryN, 2).setExecutionStrategy(ShardedExecution()) });
    expectClose((await sharded(x)) as tf.Tensor, tf.tensor2d([5, 9], [2, 1]));
    sharded.destroy();
    const single = inferenceModel((t: tf.Tensor) => tf.add(tf.mul(t, 2), 1), { options: new Options().deviceIterations(4).outputMode(OutputMode.EveryN, 2) });
    expectClose((await single(x)) as tf.Tensor, tf.tensor2d([5, 9], [2, 1]));
    single.destroy();
  });
});
