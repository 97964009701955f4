/**
 * `moduleRepr` and `String(executor)`: a model printed with its `BeginBlock`
 * annotations, as PopTorch's `module_repr` and the `repr` of a wrapped model
 * (tests/pipelining_test.py, test_begin_block_printing).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { BeginBlock, Options, inferenceModel, moduleRepr } from 'poptfjs';

describe('moduleRepr', () => {
  it('shows each BeginBlock on its layer once annotated, and so does String(executor)', () => {
    const l1 = tf.layers.dense({ units: 4, inputShape: [3], name: 'l1' });
    const l2 = tf.layers.dense({ units: 2, activation: 'relu', name: 'l2' });
    const model = tf.sequential({ layers: [l1, l2], name: 'Model' });
    const beginL1 = /\(l1\): BeginBlock\(userId=undefined, ipuId=1\) Dense\(units=4, activation=linear\)/;
    const beginL2 = /\(l2\): BeginBlock\(userId=undefined, ipuId=1\) Dense\(units=2, activation=relu\)/;
    expect(moduleRepr(model)).toBe('Sequential(\n  (l1): Dense(units=4, activation=linear)\n  (l2): Dense(units=2, activation=relu)\n)');
    BeginBlock(l1, { ipuId: 1 });
    expect(moduleRepr(model)).toMatch(beginL1);
    expect(moduleRepr(model)).not.toMatch(beginL2);
    BeginBlock(l2, { ipuId: 1 });
    expect(moduleRepr(model)).toMatch(beginL2);
    const executor = inferenceModel(model, { options: new Options().deviceIterations(2) });
    expect(String(executor)).toMatch(beginL1);
    expect(String(executor)).toMatch(beginL2);
    executor.destroy();
  });

  it('indents a nested model and names a function model', () => {
    const inner = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [2], name: 'in_dense' })], name: 'inner' });
    BeginBlock(inner.layers[0]!, { userId: 'b', ipuId: 2 });
    const outer = tf.sequential({ layers: [inner, tf.layers.dense({ units: 1, name: 'out_dense' })], name: 'outer' });
    expect(moduleRepr(outer)).toBe(
      'Sequential(\n  (inner): Sequential(\n    (in_dense): BeginBlock(userId=b, ipuId=2) Dense(units=2, activation=linear)\n  )\n  (out_dense): Dense(units=1, activation=linear)\n)',
    );
    const forward = (x: tf.Tensor) => tf.relu(x);
    expect(moduleRepr(forward)).toBe('function forward');
  });
});
