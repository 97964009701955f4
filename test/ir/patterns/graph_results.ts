/**
 * Test support for patterns: run a graph with the interpreter and compare
 * what two graphs hand back (outputs, loss, gradients, assignments).
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, expect } from 'vitest';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import type { Graph, Node } from '../../../lib/ir/graph.js';
import { GraphInterpreter } from '../../../lib/runtime/graph_interpreter.js';
import { RandomSource } from '../../../lib/executable/random_source.js';
import { expectClose } from '../../helpers.js';

/** Runs the tests of the calling file on the wasm backend. */
export function onWasmBackend(): void {
  beforeAll(async () => {
    await initBackend('wasm');
  });
}

/** The tensors a graph run needs. */
export interface GraphFeeds {
  readonly inputs: readonly tf.Tensor[];
  readonly params: ReadonlyMap<string, tf.Tensor>;
}

/** Parameter tensors by name, from a trace's variables. */
export function paramsOf(variables: ReadonlyMap<string, tf.Variable>): Map<string, tf.Tensor> {
  return new Map([...variables].map(([name, v]) => [name, v as tf.Tensor]));
}

/** The nodes of `graph` calling `kernel`. */
export function nodesOf(graph: Graph, kernel: string): Node[] {
  return graph.nodes.filter((n) => n.kernel === kernel);
}

/** Runs `graph` and returns what it hands back, by role: `output0`, `loss`, `gradient:<param>`, `assign:<param>`. */
export function runRoles(graph: Graph, feeds: GraphFeeds): Map<string, tf.Tensor> {
  const interpreter = new GraphInterpreter(graph);
  try {
    const out = interpreter.run({ inputs: feeds.inputs, params: feeds.params, random: new RandomSource(0) });
    const byRole = new Map<string, tf.Tensor>();
    graph.roles.outputs.forEach((id, i) => byRole.set(`output${i}`, out.get(id)!));
    if (graph.roles.loss !== undefined) byRole.set('loss', out.get(graph.roles.loss)!);
    for (const [name, id] of Object.entries(graph.roles.gradients ?? {})) byRole.set(`gradient:${name}`, out.get(id)!);
    for (const a of graph.assignments) byRole.set(`assign:${a.param}`, out.get(a.value)!);
    return byRole;
  } finally {
    interpreter.dispose();
  }
}

function maxAbs(t: tf.Tensor): number {
  return tf.tidy(() => (t.size === 0 ? 0 : tf.max(tf.abs(t)).dataSync()[0]!));
}

/**
 * Asserts `rewritten` hands back what `original` does, within `rtol` of each
 * element, or of the tensor's largest magnitude for elements near zero
 * (reordered float sums differ there by rounding only).
 */
export function expectSameResults(original: Graph, rewritten: Graph, feeds: GraphFeeds, rtol = 1e-5): void {
  const expected = runRoles(original, feeds);
  const actual = runRoles(rewritten, feeds);
  expect([...actual.keys()]).toEqual([...expected.keys()]);
  for (const [role, e] of expected) {
    const a = actual.get(role)!;
    expect(a.dtype, role).toBe(e.dtype);
    try {
      expectClose(a, e, rtol, rtol * maxAbs(e) + 1e-7);
    } catch (error) {
      throw new Error(`${role}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  tf.dispose([...expected.values(), ...actual.values()]);
}
