import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { PoptfjsError } from '../../../lib/common/errors.js';
import { applyPatterns, Patterns } from '../../../lib/ir/patterns/patterns.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend, paramsOf } from './graph_results.js';

onWasmBackend();

const MINIMAL = ['NoOpRemoval', 'DeadCodeElimination'];
const DEFAULT = [
  'NoOpRemoval',
  'ConstantFolding',
  'TransposeSinking',
  'ConcatSinking',
  'BiasFusion',
  'ActivationFusion',
  'ConcatSplitting',
  'MultiplyAddConvolution',
  'AddReluFusion',
  'ReluGradFusion',
  'TransposedMatMul',
  'SumAsAveragePool',
  'BroadcastWidening',
  'WeightLayoutCaching',
  'DeadCodeElimination',
];
const ALL = [
  'NoOpRemoval',
  'ConstantFolding',
  'FusedKernelLowering',
  'TransposeSinking',
  'ConcatSinking',
  'BiasFusion',
  'ActivationFusion',
  'ConcatSplitting',
  'MultiplyAddConvolution',
  'AddReluFusion',
  'ReluGradFusion',
  'TransposedMatMul',
  'SumAsAveragePool',
  'BroadcastWidening',
  'WeightLayoutCaching',
  'CommonSubexpression',
  'DeadCodeElimination',
];

describe('Patterns', () => {
  it('enables the patterns of each level, and Default when no level is given', () => {
    expect(new Patterns('NoPatterns').enabledPatterns()).toEqual([]);
    expect(new Patterns('Minimal').enabledPatterns()).toEqual(MINIMAL);
    expect(new Patterns('Default').enabledPatterns()).toEqual(DEFAULT);
    expect(new Patterns('All').enabledPatterns()).toEqual(ALL);
    expect(new Patterns().enabledPatterns()).toEqual(DEFAULT);
    expect(new Patterns().level).toBe('Default');
  });

  it('switches single patterns by name', () => {
    const patterns = new Patterns('Minimal').enablePattern('TransposedMatMul', true).enablePattern('NoOpRemoval', false);
    expect(patterns.isPatternEnabled('TransposedMatMul')).toBe(true);
    expect(patterns.isPatternEnabled('NoOpRemoval')).toBe(false);
    expect(patterns.isPatternEnabled('ConstantFolding')).toBe(false);
    expect(patterns.enabledPatterns()).toEqual(['TransposedMatMul', 'DeadCodeElimination']);
  });

  it('refuses unknown pattern names and levels, listing the known ones', () => {
    const patterns = new Patterns();
    expect(() => patterns.enablePattern('TransposeMatmul', true)).toThrow(PoptfjsError);
    expect(() => patterns.enablePattern('TransposeMatmul', true)).toThrow(`unknown pattern 'TransposeMatmul'; known patterns: ${ALL.join(', ')}`);
    expect(() => patterns.isPatternEnabled('Nope')).toThrow(/unknown pattern 'Nope'/);
    expect(() => new Patterns('Most' as 'All')).toThrow("unknown patterns level 'Most'; expected one of NoPatterns, Minimal, Default, All");
  });

  it('describes every pattern with a name, a description and a level', () => {
    const known = Patterns.knownPatterns();
    expect(known.map((p) => p.name)).toEqual(ALL);
    for (const p of known) {
      expect(p.description.length).toBeGreaterThan(10);
      expect(['Minimal', 'Default', 'All']).toContain(p.level);
    }
  });
});

describe('applyPatterns', () => {
  it('returns the graph unchanged with NoPatterns', () => {
    const { graph } = traceInference((x: tf.Tensor) => tf.matMul(x, x, true, false), [tf.ones([2, 2])]);
    const applied = applyPatterns(graph, new Patterns('NoPatterns'), { backend: 'wasm', training: false });
    expect(applied.graph).toBe(graph);
    expect(applied.fired.size).toBe(0);
  });

  it('runs the enabled patterns to a fixed point, prunes, and reports what fired', () => {
    const w = tf.variable(tf.randomNormal([3, 4]), true, 'fixed_point_w');
    const fn = (x: tf.Tensor) => {
      const scale = tf.exp(tf.scalar(0.5));
      const h = tf.reshape(tf.clone(tf.matMul(x, w, true, false)), [4, 2]);
      return tf.mul(tf.add(h, tf.clone(h)), scale);
    };
    const x = tf.randomNormal([3, 2]);
    const { graph, variables } = traceInference(fn, [x]);
    const applied = applyPatterns(graph, new Patterns('All'), { backend: 'wasm', training: false });
    expect(Object.fromEntries(applied.fired)).toMatchObject({ NoOpRemoval: 2, ConstantFolding: 1, TransposedMatMul: 1 });
    expect(applied.graph.nodes.map((n) => n.kernel)).toEqual(['Transpose', 'BatchMatMul', 'Reshape', 'Add', 'Multiply']);
    expectSameResults(graph, applied.graph, { inputs: [x], params: paramsOf(variables) });
    const again = applyPatterns(applied.graph, new Patterns('All'), { backend: 'wasm', training: false });
    expect(again.fired.size).toBe(0);
    w.dispose();
  });

  it('skips disabled patterns', () => {
    const { graph } = traceInference((x: tf.Tensor) => tf.matMul(x, x, true, false), [tf.ones([2, 2])]);
    const patterns = new Patterns('Default').enablePattern('TransposedMatMul', false);
    const applied = applyPatterns(graph, patterns, { backend: 'wasm', training: false });
    expect(applied.fired.has('TransposedMatMul')).toBe(false);
    expect(nodesOf(applied.graph, 'BatchMatMul')[0]!.attrs.transposeA).toBe(true);
  });

  it('keeps the signature of a training graph', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [3], activation: 'relu' }), tf.layers.dense({ units: 2, activation: 'softmax' })] });
    const x = tf.randomNormal([5, 3]);
    const y = tf.randomUniform([5, 2]);
    const { graph, variables } = traceTraining(model, 'categoricalCrossentropy', [x, y]);
    const applied = applyPatterns(graph, new Patterns('All'), { backend: 'wasm', training: true });
    expect(applied.graph.inputs).toHaveLength(3);
    expect(Object.keys(applied.graph.roles.gradients!)).toEqual(Object.keys(graph.roles.gradients!));
    expect(applied.graph.roles.lossScale).toBe(applied.graph.inputs[2]);
    expectSameResults(graph, applied.graph, { inputs: [x, y, tf.scalar(2)], params: paramsOf(variables) });
  });
});
