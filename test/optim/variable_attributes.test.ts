/**
 * Variable and constant optimizer attributes (PopTorch's "Constant
 * attributes"): which are which, and what `setOptimizer` does with changes
 * after compilation, counted in compilations and checked against a
 * hand-written tfjs SGD.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { optim, trainingModel } from 'poptfjs';
import { expectClose, variableOf } from '../helpers.js';

function regressor(seed: number): tf.Sequential {
  return tf.sequential({
    layers: [tf.layers.dense({ units: 3, inputShape: [4], kernelInitializer: tf.initializers.glorotUniform({ seed }) })],
  });
}

const x = tf.randomNormal([4, 4], 0, 1, 'float32', 1);
const y = tf.randomNormal([4, 3], 0, 1, 'float32', 2);

/** Hand-written tfjs SGD with momentum (torch's definition) on MSE. */
class ReferenceSGD {
  private readonly buffers = new Map<string, tf.Tensor>();
  constructor(readonly model: tf.LayersModel) {}

  step(lr: number, momentum: number): void {
    const vars = this.model.trainableWeights.map(variableOf);
    tf.tidy(() => {
      const { grads } = tf.variableGrads(() => tf.mean(tf.square(tf.sub(this.model.apply(x) as tf.Tensor, y))) as tf.Scalar, vars);
      for (const v of vars) {
        const g = grads[v.name]!;
        const previous = this.buffers.get(v.name);
        const buffer = momentum === 0 ? g : previous ? tf.add(tf.mul(previous, momentum), g) : g;
        if (momentum !== 0) {
          previous?.dispose();
          this.buffers.set(v.name, tf.keep(tf.clone(buffer)));
        }
        v.assign(tf.sub(v, tf.mul(buffer, lr)));
      }
    });
  }
}

describe('variableAttrs', () => {
  it("mark explicitly passed attributes variable and the rest constant, lr always variable (PopTorch's examples)", () => {
    const model = regressor(1);
    const variable = (opt: optim.Optimizer) => ['lr', 'momentum', 'lossScaling'].filter((a) => opt.variableAttrs.isVariable(a));
    expect(variable(new optim.SGD(model, { lr: 0.01, momentum: 0, useCombinedAccum: false }))).toEqual(['lr', 'momentum']);
    expect(variable(new optim.SGD(model, { lr: 0.01, useCombinedAccum: false }))).toEqual(['lr']);
    const marked = new optim.SGD(model, { lr: 0.01, momentum: 0, lossScaling: 2, useCombinedAccum: false });
    marked.variableAttrs.markAsConstant('lossScaling');
    expect(variable(marked)).toEqual(['lr', 'momentum']);
    const markedVariable = new optim.SGD(model, { lr: 0.01, lossScaling: 2, useCombinedAccum: false });
    markedVariable.variableAttrs.markAsVariable('momentum');
    expect(variable(markedVariable)).toEqual(['lr', 'momentum', 'lossScaling']);
    expect(variable(new optim.SGD(model))).toEqual(['lr']);
  });

  it('refuse unknown attributes and making lr constant', () => {
    const opt = new optim.Adam(regressor(2));
    expect(() => opt.variableAttrs.markAsConstant('lr')).toThrow("variableAttrs.markAsConstant: 'lr' is always variable");
    expect(() => opt.variableAttrs.markAsVariable('momentum')).toThrow(
      "variableAttrs.markAsVariable: unknown attribute 'momentum'; the attributes are lr, betas, eps, weightDecay, lossScaling",
    );
    expect(opt.variableAttrs.isConstant('betas')).toBe(true);
  });
});

describe('setOptimizer after compilation', () => {
  it('applies a changed variable attribute on the next run without recompiling', async () => {
    const model = regressor(3);
    const reference = new ReferenceSGD(regressor(3));
    const opt = new optim.SGD(model, { lr: 0.1, momentum: 0.9 });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    await executor.run(x, y);
    reference.step(0.1, 0.9);
    opt.momentum = 0.5;
    opt.lr = 0.05;
    await executor.run(x, y);
    reference.step(0.1, 0.9); // not applied yet: setOptimizer was not called
    executor.setOptimizer(opt);
    await executor.run(x, y);
    reference.step(0.05, 0.5);
    expect(executor.compileCount).toBe(1);
    executor.copyWeightsToHost();
    model.getWeights().forEach((w, i) => expectClose(w, reference.model.getWeights()[i]!, 1e-5, 1e-6));
  });

  it('refuses a changed constant attribute, naming it, and keeps training with the compiled values', async () => {
    const model = regressor(4);
    const opt = new optim.SGD(model, { lr: 0.1 });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    await executor.run(x, y);
    opt.momentum = 0.9;
    expect(() => executor.setOptimizer(opt)).toThrow(
      "setOptimizer: 'momentum' is a constant attribute compiled into the program (0, now 0.9); mark it variable before compiling (opt.variableAttrs.markAsVariable('momentum')) or pass it to the optimizer's constructor, or wrap the model again to recompile",
    );
    opt.momentum = 0;
    opt.lossScaling = 4;
    expect(() => executor.setOptimizer(opt)).toThrow(/'lossScaling' is a constant attribute/);
    opt.lossScaling = 1;
    opt.accumType = 'float16';
    expect(() => executor.setOptimizer(opt)).toThrow(/'accumType' is a constant attribute/);
    opt.accumType = 'float32';
    expect(() => executor.setOptimizer(new optim.Adam(model))).toThrow(/the model was compiled with an optim.SGD; it cannot switch to an optim.Adam without recompiling/);
    expect(() => executor.setOptimizer(opt)).not.toThrow();
    expect(executor.compileCount).toBe(1);
  });

  it('names the parameter group of a changed constant group attribute, and refuses changed groups', async () => {
    const model = regressor(5);
    const [kernel] = model.trainableWeights.map(variableOf);
    const opt = new optim.SGD(model, { lr: 0.1, paramGroups: [{ params: [kernel!], momentum: 0.5 }] });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    await executor.run(x, y);
    opt.paramGroups[0]!.momentum = 0.8;
    expect(() => executor.setOptimizer(opt)).not.toThrow();
    opt.paramGroups[1]!.weightDecay = 0.1;
    expect(() => executor.setOptimizer(opt)).toThrow(/'weightDecay' of paramGroups\[1\] is a constant attribute compiled into the program \(0, now 0.1\)/);
    expect(() => executor.setOptimizer(new optim.SGD(model, { lr: 0.1, momentum: 0.5 }))).toThrow(/the parameter groups changed from/);
  });

  it('takes a new variable loss scaling as the loss scale', async () => {
    const model = regressor(6);
    const opt = new optim.SGD(model, { lr: 0.1, lossScaling: 8 });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    await executor.run(x, y);
    expect(executor.currentLossScale()).toBe(8);
    opt.lossScaling = 64;
    executor.setOptimizer(opt);
    expect(executor.currentLossScale()).toBe(64);
    expect(executor.compileCount).toBe(1);
  });
});
