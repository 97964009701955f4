/**
 * The cost model of softmax and log-softmax over rows, against cycle counts
 * computed by hand from the documented constants and popnn's implementation
 * (lib/popnn/NonLinearity.cpp, LogSoftmax.cpp): the row maxima, x - max and
 * exp on every element, the row sums, then 1 / sum (softmax) or log(sum)
 * (log-softmax) once a row, and one more pass over the elements.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import type { Graph } from '../../lib/ir/graph.js';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { traceInference } from '../../lib/trace/trace_model.js';
import { smallIpuTarget } from '../helpers.js';
import { nodesOf, onWasmBackend } from '../ir/patterns/graph_results.js';

onWasmBackend();

const TILES = 1472;

/**
 * The cost over 1,472 tiles of the softmax of 1,472 rows of 100 elements, as the kernel `as` (tfjs has no log-softmax
 * kernel; ONNX's LogSoftmax is one), its values in float16 if asked.
 */
function costOf({ float16 = false, as = 'Softmax' } = {}) {
  const traced = traceInference((x: tf.Tensor) => tf.softmax(x), [tf.ones([TILES, 100])]).graph;
  const graph: Graph = float16 ? { ...traced, values: traced.values.map((v) => ({ ...v, precision: 'float16' as const })) } : traced;
  const [node] = nodesOf(graph, 'Softmax');
  return kernelCost(graph, { ...node!, kernel: as }, smallIpuTarget({ tiles: TILES }));
}

// A reduction of 1,472 rows of 100 elements over 1,472 tiles (100 elements a tile): a first stage at 0.5 cycles an
// element in float32 (0.25 in float16) after 170 of vertex, 100 partial sums a tile exchanged (4 bytes each at 4 a
// cycle), a second stage at 0.5 an element in float32, two syncs of 90.
const reduction = (half: boolean) => ({ compute: 170 + 100 * (half ? 0.25 : 0.5) + 170 + 100 * 0.5, exchange: 100, sync: 180 });

describe('the cost of softmax over rows', () => {
  it('multiplies by 1 / sum, computed once a row, instead of dividing every element (float32)', () => {
    const cost = costOf();
    const r = reduction(false);
    // x - max (1.5 a cycle), exp (3), 1 / sum on one row a tile (3), the multiply (1.5), each 170 of vertex and a sync.
    const compute = 2 * r.compute + (170 + 100 * 1.5) + (170 + 100 * 3) + (170 + 1 * 3) + (170 + 100 * 1.5);
    expect(cost).toEqual({ compute, exchange: 2 * r.exchange, sync: 2 * r.sync + 4 * 90, temporaryBytes: 1472 * 100 * 4 });
  });

  it('casts the float32 row sums back to float16 in a pass of their own (float16)', () => {
    const cost = costOf({ float16: true });
    const r = reduction(true);
    // x - max (0.75), exp (1), 1 / sum in float32 (3), its cast (1), the multiply (0.75).
    const compute = 2 * r.compute + (170 + 100 * 0.75) + (170 + 100 * 1) + (170 + 3) + (170 + 1) + (170 + 100 * 0.75);
    expect(cost).toEqual({ compute, exchange: 2 * r.exchange, sync: 2 * r.sync + 5 * 90, temporaryBytes: 1472 * 100 * 4 });
  });

  it('subtracts log(sum), computed once a row, for log-softmax', () => {
    const cost = costOf({ as: 'LogSoftmax' });
    const r = reduction(false);
    // x - max (1.5), exp (3), log of the sum on one row a tile (6 in float32), the subtract (1.5).
    const compute = 2 * r.compute + (170 + 100 * 1.5) + (170 + 100 * 3) + (170 + 6) + (170 + 100 * 1.5);
    expect(cost).toEqual({ compute, exchange: 2 * r.exchange, sync: 2 * r.sync + 4 * 90, temporaryBytes: 1472 * 100 * 4 });
  });
});
