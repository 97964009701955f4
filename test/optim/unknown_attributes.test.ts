/**
 * Attributes an optimizer does not have, added after it was built (the
 * `initial_lr` a torch learning-rate scheduler adds to each parameter group,
 * a `step` count set on the optimizer, a group's `lossScaling`): ignored as
 * PopTorch ignores them. Written from PopTorch's tests/optimizers_test.py
 * (test_extra_attributes, test_extra_attributes2, test_extra_attributes3 and
 * the group `loss_scaling` of test_variable_groups) and its user guide's
 * optimizer example (docs/user_guide/api.py, optim_start).
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Options, optim, trainingModel } from 'poptfjs';
import { getLogger } from '../../lib/common/log.js';

function regressor(): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 4, inputShape: [3], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed: 11 }) }),
      tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: 12 }) }),
    ],
  });
}

const x = tf.randomNormal([4, 3], 0, 1, 'float32', 5);
const y = tf.randomNormal([4, 2], 0, 1, 'float32', 6);

/** Two parameter groups, one per layer, as in PopTorch's test. */
function twoGroups(model: tf.LayersModel): optim.SGD {
  return new optim.SGD(model, { lr: 0.05, momentum: 0.5, lossScaling: 2, paramGroups: [{ params: model.layers[0]!.weights }] });
}

/** Collects the log lines written from now on. */
function collectLog(): string[] {
  const lines: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  return lines;
}

const unexpected = (lines: string[]) => lines.filter((l) => l.includes('unexpected'));

function expectSameWeights(a: tf.LayersModel, b: tf.LayersModel): void {
  a.getWeights().forEach((w, i) => expect(Array.from(w.dataSync())).toEqual(Array.from(b.getWeights()[i]!.dataSync())));
}

afterEach(() => {
  vi.restoreAllMocks();
  getLogger().setLevel('WARN');
});

describe('unknown optimizer attributes', () => {
  it('added after the model was wrapped are ignored with one warning each (test_extra_attributes)', async () => {
    const plainModel = regressor();
    const plainOpt = twoGroups(plainModel);
    const plain = trainingModel(plainModel, { loss: 'meanSquaredError', optimizer: plainOpt });
    const model = regressor();
    const opt = twoGroups(model);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    tf.dispose([await plain.run(x, y), await executor.run(x, y)]);

    const lines = collectLog();
    (opt as unknown as Record<string, number>).step = 0;
    for (const group of opt.paramGroups) (group as unknown as Record<string, number>).initialLr = 0.1;
    executor.setOptimizer(opt);
    tf.dispose([await plain.run(x, y), await executor.run(x, y)]);
    const first = unexpected(lines);
    expect(first).toHaveLength(3);
    expect(first[0]).toContain(" W: optim.SGD: ignoring unexpected optimizer attribute 'step'; the optimizer's attributes are lr, momentum,");
    expect(first[1]).toContain(
      " W: optim.SGD: ignoring unexpected group 0 attribute 'initialLr'; the group's attributes are lr, momentum, dampening, weightDecay, nesterov, velocityScaling",
    );
    expect(first[2]).toContain(" W: optim.SGD: ignoring unexpected group 1 attribute 'initialLr'");

    // A changed value makes the optimizer different; the warnings are not given again.
    opt.lossScaling = 3;
    plainOpt.lossScaling = 3;
    plain.setOptimizer(plainOpt);
    executor.setOptimizer(opt);
    tf.dispose([await plain.run(x, y), await executor.run(x, y)]);
    vi.restoreAllMocks();
    expect(unexpected(lines)).toHaveLength(3);
    expect(opt.settings().groups[0]).not.toHaveProperty('initialLr');
    expect(opt.stateDict().attributes).not.toHaveProperty('step');
    plain.copyWeightsToHost();
    executor.copyWeightsToHost();
    expectSameWeights(model, plainModel);
    plain.destroy();
    executor.destroy();
  });

  it('give no warning under relaxOptimizerAttributesChecks(true), a debug message only (test_extra_attributes2)', async () => {
    const model = regressor();
    const opt = twoGroups(model);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt, options: new Options().relaxOptimizerAttributesChecks(true) });
    tf.dispose(await executor.run(x, y));
    getLogger().setLevel('DEBUG');
    const lines = collectLog();
    (opt as unknown as Record<string, number>).step = 0;
    for (const group of opt.paramGroups) (group as unknown as Record<string, number>).initialLr = 0.1;
    executor.setOptimizer(opt);
    tf.dispose(await executor.run(x, y));
    vi.restoreAllMocks();
    const found = unexpected(lines);
    expect(found.map((l) => l.match(/ ([A-Z]): optim/)?.[1])).toEqual(['D', 'D', 'D']);
    executor.destroy();
  });

  it('present when the model was wrapped are ignored silently; one added later is warned about (test_extra_attributes3)', async () => {
    const model = regressor();
    const opt = twoGroups(model);
    (opt as unknown as Record<string, number>).step = 0;
    for (const group of opt.paramGroups) (group as unknown as Record<string, number>).initialLr = 0.1;
    const lines = collectLog();
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    tf.dispose(await executor.run(x, y));
    expect(unexpected(lines)).toEqual([]);

    opt.lossScaling = 4;
    (opt as unknown as Record<string, number>).initialLr = 0.2;
    executor.setOptimizer(opt);
    tf.dispose(await executor.run(x, y));
    vi.restoreAllMocks();
    const found = unexpected(lines);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain("W: optim.SGD: ignoring unexpected optimizer attribute 'initialLr'");
    executor.destroy();
  });

  it("a group's lossScaling, set as PopTorch's guide shows, is ignored with a warning: the optimizer's lossScaling is used", async () => {
    const model = regressor();
    const opt = new optim.SGD(model, { lr: 0.01, lossScaling: 2, useCombinedAccum: false });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    tf.dispose(await executor.run(x, y));
    const lines = collectLog();
    opt.lossScaling = 1;
    (opt.paramGroups[0] as unknown as Record<string, number>).lossScaling = 1;
    executor.setOptimizer(opt);
    tf.dispose(await executor.run(x, y));
    vi.restoreAllMocks();
    const found = unexpected(lines);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(
      "W: optim.SGD: ignoring unexpected group 0 attribute 'lossScaling'; lossScaling is not a group attribute: it has one value for the whole optimizer (opt.lossScaling)",
    );
    expect(opt.stateDict().lossScale).toBe(1);
    executor.destroy();
  });

  it("are still refused by the constructor, as torch's constructors refuse unknown keyword arguments", () => {
    expect(() => new optim.SGD(regressor(), { lr: 0.1, initialLr: 0.1 } as optim.SGDOptions)).toThrow(/optim.SGD: unknown option 'initialLr'/);
  });
});
