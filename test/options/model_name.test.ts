/** `opts.modelName(name)` names the model in profile reports, the executable and errors. */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, inferenceModel } from 'poptfjs';

describe('modelName', () => {
  it('names the executable and the profile reports, which go to a subdirectory of that name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-model-name-'));
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3] })] });
    const executor = inferenceModel(model, { options: new Options().modelName('my_classifier').enableProfiling(dir) });
    await executor.compile(tf.ones([1, 3]));
    expect(readdirSync(join(dir, 'my_classifier')).sort()).toEqual(['my_classifier-inference.html', 'my_classifier-inference.json', 'my_classifier-inference.trace.json']);
    expect(executor.executable.modelName).toBe('my_classifier');
    executor.destroy();
    model.dispose();
  });

  it('names the model in an out-of-memory error', async () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 4096, inputShape: [4096] }), tf.layers.dense({ units: 4096 }), tf.layers.dense({ units: 4096 })] });
    const opts = new Options().modelName('too_big').ipuTarget({ tiles: 64 });
    const executor = inferenceModel(model, { options: opts });
    await expect(executor.compile(tf.ones([1, 4096]))).rejects.toThrow(/^IPU 0 is out of memory compiling model 'too_big' at micro-batch 1/);
    executor.destroy();
    model.dispose();
  });
});
