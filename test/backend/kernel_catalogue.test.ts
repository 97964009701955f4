/**
 * The kernel catalogue is complete: every kernel the tracer, the ONNX importer
 * (which traces its operators' tfjs ops) and the shape-only backend can put
 * into a graph has a record with a category, a cost rule and a FLOP count,
 * each rule runs on real calls, and one of poptfjs's kernels without a record
 * is an error where it is costed, never free.
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../lib/backend/backend_selection.js';
import { FILL_KERNEL, KERNEL_CATALOGUE, POPTFJS_KERNELS, RANDOM_KERNELS, SHAPE_RULES } from '../../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { SHAPE_ONLY_BACKEND } from '../../lib/backend/shape_only/backend_registration.js';
import { PoptfjsError } from '../../lib/common/errors.js';
import { kernelCost, kernelCycles } from '../../lib/ipu/kernel_cycles.js';
import type { Graph } from '../../lib/ir/graph.js';
import { GraphBuilder } from '../../lib/ir/graph_builder.js';
import { nodeFlops } from '../../lib/ir/node_cost.js';
import { KernelRecorder } from '../../lib/trace/kernel_recorder.js';
import { smallIpuTarget } from '../helpers.js';
import { OP_CATALOG, type TensorMaker } from './shape_only/op_catalog.js';

const CATEGORIES = ['view', 'move', 'element-wise', 'reduction', 'product', 'gather/scatter', 'control', 'random', 'host', 'fill'];

/** Inputs written from the host (a trace redraws only float32 draws): float32 in [-1, 1), int32 in [0, 4), or bool. */
const hostTensorMaker: TensorMaker = {
  random(shape, dtype = 'float32') {
    const n = shape.reduce((a, b) => a * b, 1);
    const u = Array.from({ length: n }, (_, i) => (Math.sin(i * 12.9898 + 78.233) * 43758.5453) % 1);
    if (dtype === 'bool')
      return tf.tensor(
        u.map((v) => v > 0),
        shape,
        'bool',
      );
    if (dtype === 'int32')
      return tf.tensor(
        u.map((v) => Math.floor(Math.abs(v) * 4)),
        shape,
        'int32',
      );
    return tf.tensor(u, shape, 'float32');
  },
  values(values, shape, dtype) {
    return tf.tensor(values, shape, dtype);
  },
};

let initialBackend = '';
/** The graph of each case of the op catalog that traces (some read values, which a trace refuses), on its reference backend. */
const traced: Array<{ name: string; graph: Graph }> = [];

function traceCase(run: (t: TensorMaker) => tf.TensorContainer): Graph | undefined {
  try {
    const { recorder } = KernelRecorder.record(() => tf.tidy(() => run(hostTensorMaker)));
    return recorder.builder.build({ outputs: [] });
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  initialBackend = await initBackend();
  for (const backend of ['cpu', 'wasm'] as const) {
    await tf.setBackend(backend);
    for (const opCase of OP_CATALOG) {
      if ((opCase.reference ?? 'cpu') !== backend) continue;
      const graph = traceCase(opCase.run);
      if (graph) traced.push({ name: opCase.name, graph });
    }
  }
  await tf.setBackend(initialBackend);
});

afterAll(async () => {
  await tf.setBackend(initialBackend);
});

describe('the kernel catalogue', () => {
  it('has a complete record of every kernel the backends register, the shape-only backend plans and the tracer makes', () => {
    const registered = ['cpu', 'wasm', SHAPE_ONLY_BACKEND].flatMap((backend) => tf.getKernelsForBackend(backend).map((k) => k.kernelName));
    const own = [...Object.values(POPTFJS_KERNELS), ...Object.values(RANDOM_KERNELS), FILL_KERNEL];
    const kernels = new Set([...registered, ...SHAPE_RULES.keys(), ...own]);
    expect(kernels.size).toBeGreaterThan(150);
    const incomplete = [...kernels].filter((kernel) => {
      const record = KERNEL_CATALOGUE.get(kernel);
      return !record || record.name !== kernel || !CATEGORIES.includes(record.category) || typeof record.cost !== 'function' || typeof record.flops !== 'function';
    });
    expect(incomplete).toEqual([]);
  });

  it('explains each cost rule that costs nothing', () => {
    const target = smallIpuTarget({ tiles: 4 });
    const free = traced.flatMap(({ graph }) => graph.nodes.filter((node) => kernelCycles(kernelCost(graph, node, target)) === 0).map((node) => node.kernel));
    const unexplained = [...new Set(free)].filter((kernel) => KERNEL_CATALOGUE.get(kernel)?.costNote === undefined);
    expect(unexplained).toEqual([]);
  });

  it('costs every node of a catalog of op calls reaching every kernel with a shape rule', () => {
    const target = smallIpuTarget({ tiles: 4 });
    const reached = new Set<string>();
    for (const { name, graph } of traced) {
      for (const node of graph.nodes) {
        reached.add(node.kernel);
        const cost = kernelCost(graph, node, target);
        const flops = nodeFlops(graph, node);
        for (const figure of [cost.compute, cost.exchange, cost.sync, cost.temporaryBytes, flops]) {
          expect(Number.isFinite(figure) && figure >= 0, `${name}: ${node.kernel}`).toBe(true);
        }
      }
    }
    const tfjsRules = [...SHAPE_RULES.keys()].filter((kernel) => !kernel.startsWith('poptfjs.'));
    expect(tfjsRules.filter((kernel) => !reached.has(kernel)).length).toBeLessThan(tfjsRules.length / 10);
  });

  /** A graph of one node of `kernel`, from and to float32 [2]. */
  function oneNode(kernel: string): Graph {
    const b = new GraphBuilder();
    const x = b.addInput('x', [2], 'float32');
    const [y] = b.addNode(kernel, ['x'], [x], {}, [{ shape: [2], dtype: 'float32' }], { pass: 'forward' });
    return b.build({ outputs: [y!] });
  }

  it("refuses to cost one of poptfjs's kernels it has no record of, naming it", () => {
    const graph = oneNode('poptfjs.MyOwnKernel');
    const cost = () => kernelCost(graph, graph.nodes[0]!, smallIpuTarget({ tiles: 4 }));
    expect(cost).toThrow(PoptfjsError);
    expect(cost).toThrow(/no record of its kernel 'poptfjs.MyOwnKernel', so it cannot tell what it costs/);
    expect(() => nodeFlops(graph, graph.nodes[0]!)).toThrow(/no record of its kernel 'poptfjs.MyOwnKernel'/);
  });

  it('costs a kernel a user registered in tfjs as element-wise work it has no estimate of', () => {
    const graph = oneNode('MyOwnKernel');
    // 2 elements over 4 tiles: 1 a tile at 3 cycles (float32) after the vertex's 170, and one sync of 90.
    expect(kernelCost(graph, graph.nodes[0]!, smallIpuTarget({ tiles: 4 }))).toEqual({ compute: 173, exchange: 0, sync: 90, temporaryBytes: 0 });
    expect(nodeFlops(graph, graph.nodes[0]!)).toBe(2);
  });
});
