import { describe, expect, it } from 'vitest';
import { GraphBuilder } from '../../../lib/ir/graph_builder.js';
import type { Graph } from '../../../lib/ir/graph.js';
import { GraphEditor } from '../../../lib/ir/patterns/graph_editor.js';

const FLOAT2 = [{ shape: [2], dtype: 'float32' as const }];

/** x → Exp → Neg (output, loss, gradient of "w", assigned to "buffer"), and a param w. */
function smallGraph(): Graph {
  const b = new GraphBuilder();
  const x = b.addInput('x', [2], 'float32');
  const w = b.addParam('w', [2], 'float32', true);
  const [e] = b.addNode('Exp', ['x'], [x], {}, FLOAT2, { pass: 'forward', layer: 'dense' });
  const [n] = b.addNode('Neg', ['x'], [e!], {}, FLOAT2, { pass: 'forward' });
  const [m] = b.addNode('Mul', ['a', 'b'], [n!, w], {}, FLOAT2, { pass: 'backward', gradOf: 1 });
  b.addAssignment('buffer', n!);
  return b.build({ outputs: [n!], loss: n!, gradients: { w: m! } });
}

describe('GraphEditor', () => {
  it('leaves the graph it edits untouched and renumbers the result in topological order', () => {
    const graph = smallGraph();
    const before = JSON.stringify(graph);
    const editor = new GraphEditor(graph);
    const neg = graph.nodes[1]!;
    const [relu] = editor.insertBefore(neg.id, { kernel: 'Relu', inputNames: ['x'], inputs: [graph.nodes[0]!.outputs[0]!], attrs: {}, outputs: FLOAT2 });
    editor.removeNode(neg.id, [relu!]);
    const edited = editor.build();
    expect(JSON.stringify(graph)).toBe(before);
    expect(edited.nodes.map((n) => n.kernel)).toEqual(['Exp', 'Relu', 'Mul']);
    expect(edited.nodes[1]!.annotations).toEqual({ pass: 'forward' });
    edited.nodes.forEach((node, i) => {
      expect(node.id).toBe(i);
      for (const input of node.inputs) {
        const source = edited.values[input]!.source;
        if (source.kind === 'node') expect(source.node).toBeLessThan(i);
      }
      node.outputs.forEach((out, k) => expect(edited.values[out]!.source).toEqual({ kind: 'node', node: i, output: k }));
    });
    edited.values.forEach((v, i) => expect(v.id).toBe(i));
  });

  it('moves every role (output, loss, gradient, assignment) and renumbers gradOf', () => {
    const graph = smallGraph();
    const editor = new GraphEditor(graph);
    const exp = graph.nodes[0]!;
    editor.removeNode(graph.nodes[1]!.id, [exp.outputs[0]!]);
    const edited = editor.build();
    const expOut = edited.nodes[0]!.outputs[0]!;
    expect(edited.roles.outputs).toEqual([expOut]);
    expect(edited.roles.loss).toBe(expOut);
    expect(edited.assignments).toEqual([{ param: 'buffer', value: expOut }]);
    const mul = edited.nodes.find((n) => n.kernel === 'Mul')!;
    expect(mul.inputs[0]).toBe(expOut);
    expect(edited.roles.gradients!.w).toBe(mul.outputs[0]);
    // Mul was the gradient of the removed Neg; it now points at the node computing Neg's replacement.
    expect(mul.annotations.gradOf).toBe(0);
  });

  it('keeps a recomputation checkpoint on the node that makes the values of a removed checkpoint', () => {
    // ops.recomputationCheckpoint marks the node making its tensor; a pattern that replaces that node must not drop the
    // mark, or Pipeline and RecomputeAll recomputation would remake everything from the stage's input.
    const b = new GraphBuilder();
    const x = b.addInput('x', [2], 'float32');
    const [e] = b.addNode('Exp', ['x'], [x], {}, FLOAT2, { pass: 'forward' });
    const [n] = b.addNode('Neg', ['x'], [e!], {}, FLOAT2, { pass: 'forward', checkpoint: true });
    const graph = b.build({ outputs: [n!] });
    const editor = new GraphEditor(graph);
    const [relu] = editor.insertBefore(graph.nodes[1]!.id, { kernel: 'Relu', inputNames: ['x'], inputs: [e!], attrs: {}, outputs: FLOAT2, annotations: { pass: 'forward' } });
    editor.removeNode(graph.nodes[1]!.id, [relu!]);
    const edited = editor.build();
    expect(edited.nodes.map((node) => [node.kernel, node.annotations.checkpoint === true])).toEqual([
      ['Exp', false],
      ['Relu', true],
    ]);
  });

  it('lets roles name an input or a parameter', () => {
    const graph = smallGraph();
    const editor = new GraphEditor(graph);
    const w = graph.values.find((v) => v.source.kind === 'param')!.id;
    editor.removeNode(graph.nodes[2]!.id, [w]);
    const edited = editor.build();
    expect(edited.values[edited.roles.gradients!.w!]!.source).toMatchObject({ kind: 'param', name: 'w' });
  });

  it('refuses a replacement of another shape, and a use after the node was removed', () => {
    const graph = smallGraph();
    const editor = new GraphEditor(graph);
    const wide = editor.addConstant(new Float32Array(3), [3], 'float32');
    expect(() => editor.removeNode(graph.nodes[0]!.id, [wide])).toThrow(/cannot use %\d+: float32\[3\] in place of %\d+: float32\[2\]/);
    const late = new GraphEditor(graph);
    late.removeNode(graph.nodes[0]!.id, [graph.nodes[2]!.outputs[0]!]);
    expect(() => late.build()).toThrow(/used before it is computed/);
  });

  it('inserts before an inserted node, keeping the order of insertion', () => {
    const graph = smallGraph();
    const editor = new GraphEditor(graph);
    const x = graph.inputs[0]!;
    const neg = graph.nodes[1]!.id;
    const [abs] = editor.insertBefore(neg, { kernel: 'Abs', inputNames: ['x'], inputs: [x], attrs: {}, outputs: FLOAT2 });
    const absNode = editor.producer(abs!)!.id;
    const [sqrt] = editor.insertBefore(absNode, { kernel: 'Sqrt', inputNames: ['x'], inputs: [x], attrs: {}, outputs: FLOAT2 });
    editor.insertBefore(neg, { kernel: 'Floor', inputNames: ['x'], inputs: [sqrt!], attrs: {}, outputs: FLOAT2 });
    expect(editor.build().nodes.map((n) => n.kernel)).toEqual(['Exp', 'Sqrt', 'Abs', 'Floor', 'Neg', 'Mul']);
  });

  it('lists live nodes with their inputs resolved, skipping removed ones', () => {
    const graph = smallGraph();
    const editor = new GraphEditor(graph);
    const x = graph.inputs[0]!;
    editor.removeNode(graph.nodes[0]!.id, [x]);
    const live = [...editor.liveNodes()];
    expect(live.map((n) => n.kernel)).toEqual(['Neg', 'Mul']);
    expect(live[0]!.inputs).toEqual([x]);
    expect(editor.producer(graph.nodes[1]!.outputs[0]!)!.kernel).toBe('Neg');
    expect(editor.producer(x)).toBeUndefined();
  });
});
