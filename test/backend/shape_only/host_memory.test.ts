import * as tf from '@tensorflow/tfjs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { SHAPE_ONLY_BACKEND, type ShapeOnlyBackend, withShapeOnlyBackend } from '../../../lib/backend/shape_only/index.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** The garbage collector, exposed at run time (vitest's workers are not started with --expose-gc). */
function garbageCollector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/** BERT-large's shapes: a 30522×1024 embedding, then 24 layers of four 1024×1024 projections and a 1024→4096→1024 MLP. */
function buildBertLargeShapedModel(): tf.Sequential {
  const layers: tf.layers.Layer[] = [tf.layers.embedding({ inputDim: 30522, outputDim: 1024, inputLength: 128 })];
  for (let layer = 0; layer < 24; layer++) {
    for (let projection = 0; projection < 4; projection++) layers.push(tf.layers.dense({ units: 1024 }));
    layers.push(tf.layers.dense({ units: 4096, activation: 'relu' }), tf.layers.dense({ units: 1024 }));
  }
  return tf.sequential({ layers });
}

describe('building a model larger than what the host should hold', () => {
  it('with 333 M parameters and default initializers keeps the host memory growth well under 1 GiB', async () => {
    await initBackend();
    const gc = garbageCollector();
    gc();
    const rssBefore = process.memoryUsage().rss;
    const start = performance.now();
    const { parameters, output } = await withShapeOnlyBackend(() => {
      const model = buildBertLargeShapedModel();
      const prediction = model.predict(tf.zeros([2, 128])) as tf.Tensor;
      return { parameters: model.countParams(), output: prediction.shape };
    });
    const seconds = (performance.now() - start) / 1000;
    const peakGrowth = process.resourceUsage().maxRSS * 1024 - rssBefore;
    gc();
    const growth = process.memoryUsage().rss - rssBefore;
    const described = (tf.engine().findBackend(SHAPE_ONLY_BACKEND) as ShapeOnlyBackend).memory().numBytesDescribed;
    console.log(
      `333 M-parameter build on the shape-only backend: ${seconds.toFixed(1)} s, RSS growth ${(growth / MiB).toFixed(0)} MiB ` +
        `(peak at most ${(peakGrowth / MiB).toFixed(0)} MiB), tensors described ${(described / GiB).toFixed(2)} GiB`,
    );
    expect(parameters).toBe(30522 * 1024 + 24 * (4 * (1024 * 1024 + 1024) + (1024 * 4096 + 4096) + (4096 * 1024 + 1024)));
    expect(output).toEqual([2, 128, 1024]);
    expect(described).toBeGreaterThan(4 * parameters);
    expect(growth).toBeLessThan(256 * MiB);
    expect(peakGrowth).toBeLessThan(GiB);
  });
});
