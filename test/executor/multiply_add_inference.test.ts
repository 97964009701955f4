/**
 * A wrapped tfjs model in inference on wasm, where the engine has WebAssembly
 * relaxed SIMD: its convolutions and dense layers run with fused
 * multiply-adds (`MultiplyAddConvolution`), and it still gives what
 * `model.predict` gives, within float rounding.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { inferenceModel } from 'poptfjs';
import { withRelaxedSimd } from '../helpers.js';

withRelaxedSimd();

/** conv 3 × 3 (4 → 8, relu) → flatten → dense 32 (relu) → dense 16 (relu6) → dense 10 (softmax), on [8, 8, 4] images. */
function model(): tf.Sequential {
  const init = (seed: number) => tf.initializers.glorotUniform({ seed });
  return tf.sequential({
    layers: [
      tf.layers.conv2d({ filters: 8, kernelSize: 3, padding: 'same', activation: 'relu', inputShape: [8, 8, 4], kernelInitializer: init(1), biasInitializer: 'ones' }),
      tf.layers.flatten(),
      tf.layers.dense({ units: 32, activation: 'relu', kernelInitializer: init(2), biasInitializer: 'ones' }),
      tf.layers.dense({ units: 16, activation: 'relu6', kernelInitializer: init(3) }),
      tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: init(4) }),
    ],
  });
}

describe('inferenceModel on wasm with fused multiply-adds', () => {
  it.skipIf(tf.getBackend() !== 'wasm')('marks the convolution and the dense layers of columns in fours, and equals model.predict within float rounding', async () => {
    const m = model();
    const x = tf.randomNormal([8, 8, 8, 4], 0, 1, 'float32', 7);
    const executor = inferenceModel(m);
    const out = (await executor(x)) as tf.Tensor;
    // The convolution and the 32- and 16-unit layers; the 10-unit classifier keeps the backend's kernel.
    expect(executor.patterns().MultiplyAddConvolution).toBe(3);
    const expected = m.predict(x) as tf.Tensor;
    const a = out.dataSync();
    const e = expected.dataSync();
    for (let i = 0; i < e.length; i++) expect(Math.abs(a[i]! - e[i]!)).toBeLessThanOrEqual(1e-6 + 1e-5 * Math.abs(e[i]!));
    executor.destroy();
    tf.dispose([x, out, expected]);
    m.dispose();
  });
});
