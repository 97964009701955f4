/**
 * Optimizer options: defaults, validation with errors that name the option,
 * parameter groups, the attributes with one value for all groups, and the
 * state slots each configuration keeps.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { PoptfjsError, optim } from 'poptfjs';
import { variableOf } from '../helpers.js';

function mlp(): tf.Sequential {
  return tf.sequential({ layers: [tf.layers.dense({ units: 3, inputShape: [2] }), tf.layers.dense({ units: 1 })] });
}

function variablesOf(model: tf.LayersModel): tf.Variable[] {
  return model.trainableWeights.map(variableOf);
}

describe('optimizer options', () => {
  it("default to torch.optim's values and PopTorch's extras", () => {
    const model = mlp();
    const expectations: Array<[optim.Optimizer, Record<string, unknown>]> = [
      [new optim.SGD(model), { lr: 0.01, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, velocityScaling: 1 }],
      [new optim.Adam(model), { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0 }],
      [new optim.AdamW(model), { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01 }],
      [new optim.RMSprop(model), { lr: 1e-2, alpha: 0.99, eps: 1e-8, weightDecay: 0, momentum: 0, centered: false }],
      [new optim.LAMB(model), { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxWeightNorm: 65500 }],
    ];
    for (const [opt, group] of expectations) {
      const settings = opt.settings();
      expect(settings.groups).toEqual([group]);
      expect(settings.global).toMatchObject({ lossScaling: 1, accumType: 'float32' });
    }
    expect(new optim.SGD(model).settings().global).toEqual({
      lossScaling: 1,
      useCombinedAccum: false,
      accumType: 'float32',
      firstOrderMomentumAccumType: 'float32',
      maxGradNorm: Infinity,
    });
    expect(new optim.AdamW(model).biasCorrection).toBe(true);
    expect(new optim.LAMB(model).biasCorrection).toBe(true);
    expect(new optim.RMSprop(model).useTfVariant).toBe(false);
  });

  it('refuse an unknown option by name, listing the options', () => {
    expect(() => new optim.Adam(mlp(), { lr: 1e-3, betaz: [0.9, 0.99] } as optim.AdamOptions)).toThrow(
      "optim.Adam: unknown option 'betaz'; expected lr, betas, eps, weightDecay, lossScaling, accumType, firstOrderMomentumAccumType, secondOrderMomentumAccumType, maxGradNorm",
    );
    expect(() => new optim.SGD(mlp(), { secondOrderMomentumAccumType: 'float16' } as optim.SGDOptions)).toThrow(/optim.SGD: unknown option 'secondOrderMomentumAccumType'/);
    expect(() => new optim.LAMB(mlp(), { maxGradNorm: 1 } as optim.LAMBOptions)).toThrow(/optim.LAMB: unknown option 'maxGradNorm'/);
  });

  it('refuse invalid values, naming the option and the value', () => {
    const model = mlp();
    expect(() => new optim.SGD(model, { lr: -1 })).toThrow(/optim.SGD: lr = -1 is invalid: Too small: expected number to be >=0/);
    expect(() => new optim.Adam(model, { betas: [0.9, 1.5] })).toThrow(/optim.Adam: betas = the array \[0.9,1.5\] is invalid/);
    expect(() => new optim.RMSprop(model, { accumType: 'float64' as 'float32' })).toThrow(/optim.RMSprop: accumType = "float64" is invalid/);
    expect(() => new optim.SGD(model, { lossScaling: 0 })).toThrow(/optim.SGD: lossScaling = 0 is invalid/);
    expect(() => new optim.SGD(model, { momentum: Number.NaN })).toThrow(/optim.SGD: momentum = NaN is invalid/);
    expect(() => new optim.SGD(model, 'fast' as unknown as optim.SGDOptions)).toThrow(/optim.SGD: options must be an object/);
    expect(() => new optim.SGD([tf.scalar(1)] as unknown as tf.Variable[])).toThrow(/optim.SGD: an optimizer takes a tf.LayersModel or an array of tf.Variable/);
  });

  it("check the rules between SGD's options", () => {
    const model = mlp();
    expect(() => new optim.SGD(model, { nesterov: true })).toThrow(/Nesterov momentum requires momentum > 0 and dampening 0/);
    expect(() => new optim.SGD(model, { nesterov: true, momentum: 0.9, dampening: 0.1 })).toThrow(/Nesterov momentum requires/);
    expect(() => new optim.SGD(model, { velocityScaling: 128 })).toThrow(/velocityScaling applies to the combined variant only; pass useCombinedAccum: true/);
    expect(() => new optim.SGD(model, { useCombinedAccum: true, velocityScaling: 128, momentum: 0.9 })).not.toThrow();
  });

  it('check values set after construction when they are used', () => {
    const opt = new optim.SGD(mlp(), { lr: 0.1 });
    opt.momentum = -0.5;
    expect(() => opt.settings()).toThrow(/optim.SGD paramGroups\[0\]: momentum = -0.5 is invalid/);
  });
});

describe('parameter groups', () => {
  it("list the given groups first with their own values, then the other variables with the optimizer's", () => {
    const model = mlp();
    const [k1, b1, k2, b2] = variablesOf(model);
    const opt = new optim.SGD(model, { lr: 0.1, momentum: 0.9, paramGroups: [{ params: [k2!.name, model.layers[1]!.weights[1]!], lr: 0.01 }] });
    expect(opt.paramGroups.map((g) => g.params)).toEqual([
      [k2, b2],
      [k1, b1],
    ]);
    expect(opt.paramGroups.map((g) => [g.lr, g.momentum])).toEqual([
      [0.01, 0.9],
      [0.1, 0.9],
    ]);
    expect(() => opt.lr).toThrow(/the parameter groups have different values of lr; read opt.paramGroups\[i\].lr/);
    expect(opt.momentum).toBe(0.9);
    opt.lr = 0.5;
    expect(opt.paramGroups.map((g) => g.lr)).toEqual([0.5, 0.5]);
    expect(opt.hyperParameters()).toMatchObject({ lr: 0.5, momentum: 0.9, lossScaling: 1 });
  });

  it('refuse attributes that need one value for all groups, and variables they do not own', () => {
    const model = mlp();
    const [k1] = variablesOf(model);
    expect(() => new optim.SGD(model, { paramGroups: [{ params: [k1!], lossScaling: 2 } as never] })).toThrow(
      "optim.SGD paramGroups[0]: lossScaling must have one value for all parameter groups; set it in the optimizer's options, not in paramGroups",
    );
    expect(() => new optim.Adam(model, { paramGroups: [{ params: [k1!], biasCorrection: false } as never] })).toThrow(
      /optim.Adam paramGroups\[0\]: unknown option 'biasCorrection'/,
    );
    expect(() => new optim.AdamW(model, { paramGroups: [{ params: [k1!], biasCorrection: false } as never] })).toThrow(
      /biasCorrection must have one value for all parameter groups/,
    );
    const other = tf.variable(tf.zeros([1]), true, 'not_in_model');
    expect(() => new optim.SGD(model, { paramGroups: [{ params: [other] }] })).toThrow(
      /paramGroups\[0\].params\[0\] is 'not_in_model', which the optimizer does not train; its variables are/,
    );
    expect(() => new optim.SGD(model, { paramGroups: [{ params: [k1!] }, { params: [k1!.name] }] })).toThrow(
      /is in paramGroups\[0\] and paramGroups\[1\]; put it in one group/,
    );
    expect(() => new optim.SGD(model, { paramGroups: [{ params: [] }] })).toThrow(/paramGroups\[0\].params must be a non-empty array/);
    expect(() => new optim.SGD(model, { paramGroups: [{ params: [k1!], momentum: -1 }] })).toThrow(/optim.SGD paramGroups\[0\]: momentum = -1 is invalid/);
    expect(() => new optim.SGD(model, { params: [k1] } as never)).toThrow(/params belong in paramGroups entries/);
  });

  it('let LAMB and RMSprop set their torch hyper-parameters per group', () => {
    const model = mlp();
    const [k1] = variablesOf(model);
    const lamb = new optim.LAMB(model, { paramGroups: [{ params: [k1!], maxWeightNorm: 2, betas: [0.8, 0.9] }] });
    expect(lamb.paramGroups[0]).toMatchObject({ maxWeightNorm: 2, betas: [0.8, 0.9] });
    const rmsprop = new optim.RMSprop(model, { paramGroups: [{ params: [k1!], centered: true, momentum: 0.5 }] });
    expect(rmsprop.stateSlots().map((s) => s.name)).toEqual(['squareAvg', 'gradAvg', 'momentumBuffer']);
  });
});

describe('state slots', () => {
  it('say what state each configuration keeps per parameter, and in which precision', () => {
    const model = mlp();
    expect(new optim.SGD(model).stateSlots()).toEqual([]);
    expect(new optim.SGD(model, { momentum: 0.9, firstOrderMomentumAccumType: 'float16' }).stateSlots()).toEqual([{ name: 'momentumBuffer', precision: 'float16' }]);
    expect(new optim.SGD(model, { momentum: 0.9, useCombinedAccum: true }).stateSlots()).toEqual([{ name: 'scaledVelocity', precision: 'parameter' }]);
    expect(new optim.Adam(model, { secondOrderMomentumAccumType: 'float16' }).stateSlots()).toEqual([
      { name: 'expAvg', precision: 'float32' },
      { name: 'expAvgSq', precision: 'float16' },
    ]);
    expect(new optim.RMSprop(model).stateSlots()).toEqual([{ name: 'squareAvg', precision: 'float32' }]);
  });

  it('are errors of type optimizer', () => {
    try {
      new optim.SGD(mlp(), { lr: -1 });
    } catch (error) {
      expect(error).toBeInstanceOf(PoptfjsError);
      expect((error as PoptfjsError).type).toBe('optimizer');
    }
    expect.assertions(2);
  });
});
