/**
 * Attributes an optimizer does not have, added after it was built (the
 * `initial_lr` a torch learning-rate scheduler adds to each parameter group,
 * or a property set on the optimizer): errors naming them, or, with
 * `Options.relaxOptimizerAttributesChecks(true)`, ignored with one warning
 * each, as PopTorch's test_extra_attributes expects.
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Options, optim, trainingModel } from 'poptfjs';

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

/** Collects the warnings logged from now on. */
function collectWarnings(): string[] {
  const lines: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  return lines;
}

afterEach(() => vi.restoreAllMocks());

describe('unknown optimizer attributes', () => {
  it('are errors naming the attribute by default: in a parameter group at setOptimizer, on the optimizer at compile', async () => {
    const model = regressor();
    const opt = twoGroups(model);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    tf.dispose(await executor.run(x, y));
    (opt.paramGroups[0] as unknown as Record<string, number>).initialLr = 0.1;
    expect(() => executor.setOptimizer(opt)).toThrow(
      "optim.SGD paramGroups[0]: unknown attribute 'initialLr'; expected lr, momentum, dampening, weightDecay, nesterov, velocityScaling " +
        '(Options.relaxOptimizerAttributesChecks(true) ignores unknown attributes with a warning)',
    );
    executor.destroy();

    const other = regressor();
    const withProperty = twoGroups(other);
    (withProperty as unknown as Record<string, number>).initialLr = 0.2;
    const second = trainingModel(other, { loss: 'meanSquaredError', optimizer: withProperty });
    await expect(second.compile(x, y)).rejects.toThrow(
      /^optim.SGD: unknown attribute 'initialLr'; expected lr, momentum, .*, lossScaling, useCombinedAccum, accumType, firstOrderMomentumAccumType, maxGradNorm/,
    );
    second.destroy();
  });

  it("are still refused by the constructor, which knows no executor's options", () => {
    expect(() => new optim.SGD(regressor(), { lr: 0.1, initialLr: 0.1 } as optim.SGDOptions)).toThrow(/optim.SGD: unknown option 'initialLr'/);
  });

  it('are ignored with one warning each under relaxOptimizerAttributesChecks(true): the numbers are those without them', async () => {
    const plainModel = regressor();
    const plain = trainingModel(plainModel, { loss: 'meanSquaredError', optimizer: twoGroups(plainModel) });
    const model = regressor();
    const opt = twoGroups(model);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt, options: new Options().relaxOptimizerAttributesChecks(true) });
    tf.dispose([await plain.run(x, y), await executor.run(x, y)]);

    const warnings = collectWarnings();
    for (const group of opt.paramGroups) (group as unknown as Record<string, number>).initialLr = 0.1;
    (opt as unknown as Record<string, number>).initialLr = 0.2;
    executor.setOptimizer(opt);
    tf.dispose([await plain.run(x, y), await executor.run(x, y)]);
    opt.lossScaling = 2;
    executor.setOptimizer(opt);
    tf.dispose([await plain.run(x, y), await executor.run(x, y)]);
    vi.restoreAllMocks();

    const unknown = warnings.filter((l) => l.includes('unknown attribute'));
    expect(unknown).toHaveLength(3);
    expect(unknown[0]).toContain(" W: optim.SGD: ignoring unknown attribute 'initialLr' (relaxOptimizerAttributesChecks); expected lr, momentum,");
    expect(unknown[1]).toContain(
      "W: optim.SGD paramGroups[0]: ignoring unknown attribute 'initialLr' (relaxOptimizerAttributesChecks); expected lr, momentum, dampening, weightDecay, nesterov, velocityScaling",
    );
    expect(unknown[2]).toContain("W: optim.SGD paramGroups[1]: ignoring unknown attribute 'initialLr'");
    expect(opt.settings().groups[0]).not.toHaveProperty('initialLr');
    plain.copyWeightsToHost();
    executor.copyWeightsToHost();
    model.getWeights().forEach((w, i) => expect(Array.from(w.dataSync())).toEqual(Array.from(plainModel.getWeights()[i]!.dataSync())));
    plain.destroy();
    executor.destroy();
  });
});
