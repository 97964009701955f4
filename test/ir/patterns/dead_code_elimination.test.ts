import { describe, expect, it } from 'vitest';
import { GraphBuilder } from '../../../lib/ir/graph_builder.js';
import { deadCodeElimination } from '../../../lib/ir/patterns/dead_code_elimination.js';

const CONTEXT = { backend: 'wasm', training: false };
const FLOAT2 = [{ shape: [2], dtype: 'float32' as const }];

describe('DeadCodeElimination', () => {
  it('removes nodes nothing depends on and counts them', () => {
    const b = new GraphBuilder();
    const x = b.addInput('x', [2], 'float32');
    const [unused] = b.addNode('Exp', ['x'], [x], {}, FLOAT2, { pass: 'forward' });
    b.addNode('Neg', ['x'], [unused!], {}, FLOAT2, { pass: 'forward' });
    const [y] = b.addNode('Relu', ['x'], [x], {}, FLOAT2, { pass: 'forward' });
    const graph = b.build({ outputs: [y!] });
    const { graph: pruned, count } = deadCodeElimination.apply(graph, CONTEXT);
    expect(count).toBe(2);
    expect(pruned.nodes.map((n) => n.kernel)).toEqual(['Relu']);
    expect(pruned.inputs).toHaveLength(1);
  });

  it('counts nothing on a graph without dead code', () => {
    const b = new GraphBuilder();
    const x = b.addInput('x', [2], 'float32');
    const [y] = b.addNode('Relu', ['x'], [x], {}, FLOAT2, { pass: 'forward' });
    expect(deadCodeElimination.apply(b.build({ outputs: [y!] }), CONTEXT).count).toBe(0);
  });
});
