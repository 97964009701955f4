/**
 * `executor.getTensorNames()`: the names of the compiled graph's tensors,
 * each one `Options.anchorTensor` takes, also on a model loaded from an
 * exported executable. Written from PopTorch's tests/debug_tensors_test.py
 * (test_tensor_names, test_tensor_names_from_precompiled_model).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, load, optim, trainingModel } from 'poptfjs';
import { expectClose, variableOf } from '../helpers.js';

function model(): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 10, inputShape: [10], activation: 'relu', name: 'fc1', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
      tf.layers.dense({ units: 10, name: 'fc2', kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
    ],
  });
}

const input = tf.randomUniform([10, 10], 0, 1, 'float32', 3);
const label = tf.randomUniform([10, 10], 0, 1, 'float32', 4);

describe('getTensorNames', () => {
  it('lists the inputs, weights, loss, layers, gradients and values once compiled (test_tensor_names)', async () => {
    const m = model();
    const executor = trainingModel(m, { loss: 'meanSquaredError', optimizer: new optim.SGD(m, { lr: 0.1 }) });
    expect(() => executor.getTensorNames()).toThrow('getTensorNames: the model is not compiled yet; call compile(...inputs) or run it once');
    await executor.run(input, label);
    const names = executor.getTensorNames();
    expect(names).toContain('fc1');
    expect(names).toContain('fc2');
    expect(names).toContain('loss');
    expect(names.some((t) => t.startsWith('Gradient___') && t.includes('fc2'))).toBe(true);
    const kernel = variableOf(m.layers[0]!.weights[0]!).name;
    expect(names).toContain(kernel);
    const inputName = names.find((t) => executor.executable.graph.values.some((v) => v.source.kind === 'input' && v.source.name === t))!;
    expect(inputName).toBeDefined();
    expect(names.filter((t) => t.startsWith('%'))).toHaveLength(executor.executable.graph.values.length);
    executor.destroy();

    // Each name is one anchorTensor takes: the loss, a weight and an input come back as they were in the step.
    const anchored = model();
    const options = new Options().anchorTensor('l', 'loss').anchorTensor('w', variableOf(anchored.layers[0]!.weights[0]!).name).anchorTensor('x', inputName);
    const second = trainingModel(anchored, { loss: 'meanSquaredError', optimizer: new optim.SGD(anchored, { lr: 0.1 }), options });
    const weightBefore = anchored.getWeights()[0]!.clone();
    const [, loss] = (await second.run(input, label)) as [tf.Tensor, tf.Tensor];
    expectClose(second.getAnchoredTensor('l'), loss);
    expectClose(second.getAnchoredTensor('w'), weightBefore);
    expectClose(second.getAnchoredTensor('x'), input);
    second.destroy();
  });

  it('lists the same names on a model loaded from its exported executable (test_tensor_names_from_precompiled_model)', async () => {
    const m = model();
    const executor = trainingModel(m, { loss: 'meanSquaredError', optimizer: new optim.SGD(m, { lr: 0.1 }) });
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-names-')), 'model.poptfjs');
    await executor.compileAndExport(file, input, label);
    const names = executor.getTensorNames();
    executor.destroy();
    const loaded = await load(file);
    await loaded.compile(input, label);
    const loadedNames = loaded.getTensorNames();
    // The rebuilt model's weights are named under the executable's model; the layers keep their names.
    expect(loadedNames).toHaveLength(names.length);
    for (const pattern of [/^fc1$/, /^fc2$/, /^input/, /^loss$/, /^Gradient___.*\bfc1\b/, /\bfc2\/kernel/]) expect(loadedNames.some((t) => pattern.test(t))).toBe(true);
    loaded.destroy();
  });
});
