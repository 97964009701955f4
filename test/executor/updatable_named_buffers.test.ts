import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Options, PoptfjsError, inferenceModel } from 'poptfjs';

const variables: tf.Variable[] = [];
afterEach(() => tf.dispose(variables.splice(0)));

/** PopTorch's UpdatableBuffer (tests/buffers_test.py): sum(x + buffer_1 + buffer_2), both buffers ones (and a zero weight). */
function updatableBuffer() {
  const buffer1 = tf.variable(tf.ones([1]), false, 'buffer_1');
  const buffer2 = tf.variable(tf.ones([1]), false, 'buffer_2');
  const weight = tf.variable(tf.zeros([1]), true, 'weight');
  variables.push(buffer1, buffer2, weight);
  const forward = (x: tf.Tensor) => tf.sum(tf.add(tf.add(tf.add(x, buffer1), buffer2), weight));
  return { buffer1, buffer2, weight, forward };
}

const x = () => tf.ones([3]);
const value = async (t: unknown) => (await (t as tf.Tensor).data())[0];

describe('Options.updatableNamedBuffers and copyNamedBuffersToDevice', () => {
  it('copies only the named buffer to the device, without recompiling', async () => {
    const m = updatableBuffer();
    const executor = inferenceModel(m.forward, { options: new Options().updatableNamedBuffers(['buffer_1']) });
    expect(await value(await executor(x()))).toBe(9);

    m.buffer1.assign(tf.add(m.buffer1, 1));
    executor.copyNamedBuffersToDevice();
    expect(await value(await executor(x()))).toBe(12);

    // buffer_2 is not named: the device keeps its old value.
    m.buffer2.assign(tf.add(m.buffer2, 1));
    executor.copyNamedBuffersToDevice();
    expect(await value(await executor(x()))).toBe(12);
    expect(executor.compileCount).toBe(1);
  });

  it('copies every named buffer', async () => {
    const m = updatableBuffer();
    const executor = inferenceModel(m.forward, { options: new Options().updatableNamedBuffers(['buffer_1', 'buffer_2']) });
    expect(await value(await executor(x()))).toBe(9);
    m.buffer1.assign(tf.add(m.buffer1, 1));
    executor.copyNamedBuffersToDevice();
    expect(await value(await executor(x()))).toBe(12);
    m.buffer2.assign(tf.add(m.buffer2, 1));
    executor.copyNamedBuffersToDevice();
    expect(await value(await executor(x()))).toBe(15);
  });

  it('is an error when no buffer was named, and the device keeps its values', async () => {
    const m = updatableBuffer();
    const executor = inferenceModel(m.forward);
    expect(await value(await executor(x()))).toBe(9);
    m.buffer1.assign(tf.add(m.buffer1, 1));
    expect(() => executor.copyNamedBuffersToDevice()).toThrow(
      new PoptfjsError('copyNamedBuffersToDevice: no buffers are marked as updatable; name them with Options.updatableNamedBuffers([...])', { type: 'executor' }),
    );
    expect(await value(await executor(x()))).toBe(9);
  });

  it('refuses, when compiling, a name that is not a buffer of the model', async () => {
    const m = updatableBuffer();
    const unknown = inferenceModel(m.forward, { options: new Options().updatableNamedBuffers(['non_existing_buffer']) });
    await expect(unknown(x())).rejects.toThrow(
      "Options.updatableNamedBuffers: the model has no buffer 'non_existing_buffer'; its buffers (non-trainable weights it reads) are 'buffer_1', 'buffer_2'",
    );
    unknown.destroy();
    const trainable = inferenceModel(m.forward, { options: new Options().updatableNamedBuffers(['weight']) });
    await expect(trainable(x())).rejects.toThrow("Options.updatableNamedBuffers: 'weight' is a trainable weight, not a buffer;");
  });

  it('checks its argument where it is set', () => {
    expect(() => new Options().updatableNamedBuffers('buffer_1' as unknown as string[])).toThrow(
      new TypeError('Options.updatableNamedBuffers: expected an array of buffer names, got "buffer_1"'),
    );
    expect(() => new Options().updatableNamedBuffers(['a', ''])).toThrow('Options.updatableNamedBuffers: buffers[1]: expected a non-empty string, got ""');
    expect(new Options().updatableNamedBuffers(['a', 'b', 'a']).settings.updatableNamedBuffers).toEqual(['a', 'b']);
  });
});
