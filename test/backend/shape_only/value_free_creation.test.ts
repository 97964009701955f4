/**
 * Nothing computed while planning: random draws, layers' initial weights and
 * gradients' fills have shapes and no values on the shape-only backend, so a
 * plan makes no array of a weight's or an activation's size on the host, for
 * a model written with tfjs ops as for one made of tfjs layers.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AutoStage, Options, PipelinedExecution, plan } from 'poptfjs';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { FILL_GRADIENTS } from '../../../lib/backend/shape_only/fill_gradients.js';
import { SHAPE_ONLY_MAX_KEPT_ELEMENTS, ShapeOnlyError, withShapeOnlyBackend } from '../../../lib/backend/shape_only/index.js';
import { gptInputs, gptLanguageModel, type GptConfig } from '../../../examples/models/gpt.js';
import { describeArrays, hostArraysMadeBy } from './host_arrays.js';

/** The smallest weight or activation of the models below has 32 768 elements: no array of that size may be made while planning. */
const WATCHED_LENGTH = 32768;

/** A GPT decoder small enough to build on a computing backend: 4096 tokens of 256, 2 layers, sequence 128. */
const SMALL_GPT: GptConfig = { vocabSize: 4096, hiddenSize: 256, layers: 2, heads: 4, maxPositions: 128, dropout: 0.1 };
const SEQUENCE = 128;

/** A tfjs-layers model using every built-in initializer family, layer normalization, dropout and pooling: 64 tokens, widths 128 to 1024. */
function layersModel(): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.embedding({ inputDim: 4096, outputDim: 256, inputLength: 64, embeddingsInitializer: 'randomNormal' }),
      tf.layers.layerNormalization(),
      tf.layers.dense({ units: 1024, activation: 'relu', kernelInitializer: 'heNormal', biasInitializer: 'ones' }),
      tf.layers.dropout({ rate: 0.1 }),
      tf.layers.dense({ units: 256, kernelInitializer: 'truncatedNormal' }),
      tf.layers.dense({ units: 128, kernelInitializer: 'orthogonal' }),
      tf.layers.dense({ units: 128, kernelInitializer: 'identity' }),
      tf.layers.dense({ units: 256, kernelInitializer: tf.initializers.constant({ value: 0.5 }), biasInitializer: 'randomUniform' }),
      tf.layers.dense({ units: 256, kernelInitializer: 'zeros' }),
      tf.layers.globalAveragePooling1d(),
      tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: 'leCunUniform' }),
    ],
  });
}

/** A pipeline over the model's blocks, the head back on IPU 0 as its own stage. */
function pipelined(): Options {
  const options = new Options().setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement));
  options.Training.gradientAccumulation(8);
  return options;
}

beforeAll(async () => {
  await initBackend();
});

describe('a plan computes no values', () => {
  it('of a GPT decoder written with tfjs ops (random draws, dropout, layer norms, tied embedding), though building it computes them', async () => {
    const built = await hostArraysMadeBy(WATCHED_LENGTH, () => {
      const model = gptLanguageModel(SMALL_GPT, 2);
      tf.dispose(Object.values(tf.engine().state.registeredVariables));
      return model;
    });
    // The guard sees what tfjs computes: the embeddings and every weight matrix.
    expect(built.arrays.length).toBeGreaterThanOrEqual(2 + 4 * SMALL_GPT.layers);

    const planned = await hostArraysMadeBy(WATCHED_LENGTH, () =>
      plan(() => gptLanguageModel(SMALL_GPT, 2), { options: pipelined(), training: true, optimizer: 'adam', inputs: gptInputs(1, SEQUENCE) }),
    );
    expect(planned.arrays, describeArrays(planned.arrays)).toEqual([]);
    const h = SMALL_GPT.hiddenSize;
    const perLayer = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h);
    expect(planned.result.parameters).toBe(SMALL_GPT.vocabSize * h + SMALL_GPT.maxPositions * h + SMALL_GPT.layers * perLayer + 2 * h);
  });

  it('of a tfjs-layers model, whatever its initializers (random, variance scaling, orthogonal, identity, constant, zeros, ones)', async () => {
    const built = await hostArraysMadeBy(WATCHED_LENGTH, () => layersModel().dispose());
    expect(built.arrays.length).toBeGreaterThanOrEqual(6);

    const planned = await hostArraysMadeBy(WATCHED_LENGTH, () =>
      plan(layersModel, { loss: 'categoricalCrossentropy', optimizer: 'sgd', inputs: [{ shape: [8, 64], dtype: 'int32' }], target: { shape: [8, 10] } }),
    );
    expect(planned.arrays, describeArrays(planned.arrays)).toEqual([]);
    expect(planned.result.parameters).toBe(
      4096 * 256 + 2 * 256 + (256 * 1024 + 1024) + (1024 * 256 + 256) + (256 * 128 + 128) + (128 * 128 + 128) + (128 * 256 + 256) + (256 * 256 + 256) + (256 * 10 + 10),
    );
  });
});

describe('tensors made without values', () => {
  it('say where they came from when read: the random op, or the weight and its layer', async () => {
    await withShapeOnlyBackend(() => {
      expect(() => tf.truncatedNormal([3, 4], 0, 0.02).dataSync()).toThrow(
        /read the values of a tensor of shape \[3,4\] \(float32\) drawn by tf.truncatedNormal: random draws are not computed while planning/,
      );
      expect(() => tf.randomUniform([5], 0, 10, 'int32').arraySync()).toThrow(/drawn by tf.randomUniform/);
      const draw = (() => {
        try {
          tf.randomGamma([2], 1).dataSync();
        } catch (error) {
          return error;
        }
      })();
      expect(draw).toBeInstanceOf(ShapeOnlyError);
      expect((draw as ShapeOnlyError).location).toBe('tf.randomGamma');
      const dense = tf.layers.dense({ units: 3, name: 'projection' });
      dense.build([null, 2]);
      expect(() => dense.getWeights()[0]!.dataSync()).toThrow(/read the initial values of weight 'kernel' of layer 'projection' \(a tensor of shape \[2,3\] \(float32\)\)/);
    });
  });

  it('keep their shapes and dtypes through what tfjs builds on random draws: dropout, randomStandardNormal, randomUniformInt', async () => {
    const shapes = await withShapeOnlyBackend(() => {
      const dropped = tf.dropout(tf.fill([64, 128], 1), 0.5);
      return [dropped, tf.randomStandardNormal([7, 9]), tf.randomUniformInt([4, 5], 0, 10)].map((t) => [t.shape, t.dtype]);
    });
    expect(shapes).toEqual([
      [[64, 128], 'float32'],
      [[7, 9], 'float32'],
      [[4, 5], 'int32'],
    ]);
  });

  it('are made only while the shape-only backend is in use: afterwards tfjs draws, initializes and differentiates as before', async () => {
    const gradientsBefore = FILL_GRADIENTS.map((g) => tf.getGradient(g.kernelName));
    await withShapeOnlyBackend(() => {
      expect(FILL_GRADIENTS.map((g) => tf.getGradient(g.kernelName))).toEqual(FILL_GRADIENTS);
    });
    expect(FILL_GRADIENTS.map((g) => tf.getGradient(g.kernelName))).toEqual(gradientsBefore);
    expect(Object.hasOwn(tf.TensorBuffer.prototype, 'size')).toBe(false);
    const drawn = tf.randomNormal([4000], 0, 1, 'float32', 7);
    const values = drawn.dataSync();
    expect(tf.moments(drawn).variance.dataSync()[0]).toBeGreaterThan(0.9);
    expect(new Set(values).size).toBe(4000);
    const dense = tf.layers.dense({ units: 2, kernelInitializer: 'ones' });
    dense.build([null, 2]);
    expect(Array.from(dense.getWeights()[0]!.dataSync())).toEqual([1, 1, 1, 1]);
    const x = tf.tensor2d([
      [1, 2],
      [3, 5],
    ]);
    expect(
      Array.from(
        tf
          .grad((t: tf.Tensor) => tf.mean(t))(x)
          .dataSync(),
      ),
    ).toEqual([0.25, 0.25, 0.25, 0.25]);
    tf.dispose([drawn, x]);
  });
});

describe("gradients' fills", () => {
  it('are the values tfjs gives, on any backend, and the Fill kernel makes those a trace would record as fills', async () => {
    const x = tf.randomNormal([3, 700], 0, 1, 'float32', 3);
    const indices = tf.tensor1d([0, 2, 1], 'int32');
    const reference = (kernelName: string) => tf.getGradient(kernelName)!;
    const cases: Array<[string, tf.Tensor[], Record<string, unknown>, tf.Tensor]> = [
      ['Mean', [x], { axis: [1] }, tf.randomNormal([3], 0, 1, 'float32', 4)],
      ['Sum', [x], { axis: [0, 1] }, tf.scalar(2.5)],
      ['OneHot', [indices], {}, tf.ones([3, 3])],
    ];
    for (const [kernelName, saved, attrs, dy] of cases) {
      const replaced = FILL_GRADIENTS.find((g) => g.kernelName === kernelName)!;
      const ours = replaced.gradFunc(dy, saved, attrs as tf.NamedAttrMap);
      const theirs = reference(kernelName).gradFunc(dy, saved, attrs as tf.NamedAttrMap);
      for (const input of Object.keys(theirs)) {
        expect(Array.from(ours[input]!().dataSync())).toEqual(Array.from(theirs[input]!().dataSync()));
      }
    }
    const kernels: string[] = [];
    const { runKernel } = tf.engine() as unknown as { runKernel: (name: string, ...rest: unknown[]) => unknown };
    const engine = tf.engine() as unknown as { runKernel: typeof runKernel };
    engine.runKernel = function (name, ...rest) {
      kernels.push(name);
      return runKernel.call(this, name, ...rest);
    };
    try {
      const mean = FILL_GRADIENTS.find((g) => g.kernelName === 'Mean')!;
      mean.gradFunc(tf.zeros([3]), [x], { axis: [1] }).x!();
      expect(kernels).toContain('Fill');
      kernels.length = 0;
      const small = tf.zeros([4, SHAPE_ONLY_MAX_KEPT_ELEMENTS / 4]);
      mean.gradFunc(tf.zeros([4]), [small], { axis: [1] }).x!();
      expect(kernels).not.toContain('Fill');
      small.dispose();
    } finally {
      delete (engine as Partial<typeof engine>).runKernel;
    }
    tf.dispose([x, indices]);
  });
});
