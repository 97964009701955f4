/**
 * Reports name each weight as its model does: a model built (or loaded) a
 * second time in one process, whose tf.Variables tfjs numbered `_1`, reports
 * the same weight names as the first copy.
 */
import * as tf from '@tensorflow/tfjs';
import { assert, describe, expect, it } from 'vitest';
import { BeginBlock, Options, inferenceModel, optim, plan, trainingModel, type PoplarExecutor } from 'poptfjs';
import { reportedWeightNames } from '../../lib/trace/weight_names.js';
import { variableOf } from '../helpers.js';

/** A small model with the layer names a saved Keras model has. */
function namedModel(): tf.LayersModel {
  const input = tf.input({ shape: [8], name: 'features' });
  const hidden = tf.layers.dense({ units: 16, activation: 'relu', name: 'dense_1' }).apply(input) as tf.SymbolicTensor;
  const output = tf.layers.dense({ units: 4, name: 'dense_2' }).apply(hidden) as tf.SymbolicTensor;
  const model = tf.model({ inputs: input, outputs: output, name: 'classifier' });
  BeginBlock(model.getLayer('dense_2'), { ipuId: 1 });
  return model;
}

/** Each IPU's memory items (kind and name, no sizes). */
function memoryItemNames(executor: PoplarExecutor): string[][] {
  return executor.executable.hardware.memory.ipus.map((m) => m.items.map((i) => `${i.kind} ${i.name}`).sort());
}

/** Compiles a training step of `model`, pipelined over two IPUs; returns the executor. */
async function compiledTraining(model: tf.LayersModel): Promise<PoplarExecutor> {
  const options = new Options();
  options.Training.gradientAccumulation(4);
  const executor = trainingModel(model, { options, loss: 'meanSquaredError', optimizer: new optim.Adam(model, { lr: 1e-3 }) });
  await executor.compile(tf.zeros([4, 8]), tf.zeros([4, 4]));
  return executor;
}

describe('weight names in reports', () => {
  it('are the same for a second copy of a model, whose variables tfjs numbered per process', async () => {
    const first = namedModel();
    const second = namedModel();
    second.weights.forEach((w, i) => expect(w.name).toMatch(new RegExp(`^${first.weights[i]!.name}_\\d+$`)));

    const [a, b] = [await compiledTraining(first), await compiledTraining(second)];
    expect(memoryItemNames(b)).toEqual(memoryItemNames(a));
    expect(memoryItemNames(b)[1]).toContain('weights dense_2/kernel');
    expect(memoryItemNames(b)[1]).toContain('optimizer state dense_2/kernel');
    expect(b.getSummaryReport()).toBe(a.getSummaryReport());
    // The executable still binds its parameters to the tf.Variables by their own names.
    const parameterNames = (executor: PoplarExecutor) => executor.executable.graph.values.flatMap((v) => (v.source.kind === 'param' ? [v.source.name] : []));
    expect(parameterNames(b).sort()).toEqual(second.weights.map((w) => w.name).sort());
    a.destroy();
    b.destroy();
  });

  it('are the same for a model loaded twice from one file, in inference and in plan()', async () => {
    const json = namedModel().toJSON(null, false);
    assert(typeof json !== 'string', 'toJSON(null, false) returns the JSON object');
    const loaded = [await tf.models.modelFromJSON(json), await tf.models.modelFromJSON(json)];
    expect(loaded[0]!.weights[0]!.name).not.toBe(loaded[1]!.weights[0]!.name);
    const names: string[][][] = [];
    for (const model of loaded) {
      const executor = inferenceModel(model, { options: new Options().deviceIterations(2) });
      await executor.compile(tf.zeros([2, 8]));
      names.push(memoryItemNames(executor));
      executor.destroy();
    }
    expect(names[1]).toEqual(names[0]);
    expect(names[0]!.flat()).toEqual(expect.arrayContaining(['weights dense_1/kernel', 'weights dense_1/bias', 'weights dense_2/kernel', 'weights dense_2/bias']));
    const planned = await plan(() => tf.models.modelFromJSON(json), { inputs: [{ shape: [2, 8] }] });
    expect(planned.memory.ipus.flatMap((m) => m.items.filter((i) => i.kind === 'weights').map((i) => i.name)).sort()).toEqual([
      'dense_1/bias',
      'dense_1/kernel',
      'dense_2/bias',
      'dense_2/kernel',
    ]);
  });

  it('number weights that share a name within one model in the order of its layers', () => {
    const inner = () => tf.sequential({ name: `inner`, layers: [tf.layers.dense({ units: 2, inputShape: [2], name: 'dense' })] });
    const build = () => {
      const input = tf.input({ shape: [2] });
      const nested = inner().apply(input) as tf.SymbolicTensor;
      return tf.model({ inputs: input, outputs: tf.layers.dense({ units: 1, name: 'dense' }).apply(nested) as tf.SymbolicTensor });
    };
    const reported = (model: tf.LayersModel) => {
      const names = reportedWeightNames(model.layers, []);
      return model.weights.map((w) => names.get(variableOf(w).name));
    };
    const expected = ['dense/kernel', 'dense/bias', 'dense/kernel_1', 'dense/bias_1'];
    expect(reported(build())).toEqual(expected);
    expect(reported(build())).toEqual(expected);
  });
});
