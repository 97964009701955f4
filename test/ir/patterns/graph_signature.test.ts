import { describe, expect, it } from 'vitest';
import { GraphBuilder } from '../../../lib/ir/graph_builder.js';
import { graphSignature } from '../../../lib/ir/patterns/graph_signature.js';

describe('graphSignature', () => {
  it('names the types of the inputs and of every role', () => {
    const b = new GraphBuilder();
    const x = b.addInput('input0', [2, 3], 'float32');
    const scale = b.addInput('lossScale', [], 'float32');
    const w = b.addParam('w', [3], 'float32', true);
    const [y] = b.addNode('Mul', ['a', 'b'], [x, w], {}, [{ shape: [2, 3], dtype: 'float32' }], { pass: 'forward' });
    const [loss] = b.addNode('Sum', ['x'], [y!], { axis: null, keepDims: false }, [{ shape: [], dtype: 'float32' }], { pass: 'forward' });
    b.addAssignment('steps', scale);
    const graph = b.build({ outputs: [y!], loss: loss!, gradients: { w }, lossScale: scale });
    expect(graphSignature(graph)).toBe(
      'inputs (float32[2,3], float32[]); outputs (float32[2,3]); loss float32[]; gradients {w: float32[3]}; lossScale float32[]; assignments {steps: float32[]}',
    );
  });

  it('says which roles are missing', () => {
    const b = new GraphBuilder();
    const x = b.addInput('input0', [1], 'int32');
    expect(graphSignature(b.build({ outputs: [x] }))).toBe('inputs (int32[1]); outputs (int32[1]); no loss; no gradients; no lossScale; assignments {}');
  });
});
