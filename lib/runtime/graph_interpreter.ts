/**
 * Executes an IR graph on the active tfjs backend.
 *
 * Kernels are looked up once when the interpreter is built. By default each
 * node calls the backend's kernel function directly (no tape, no scopes) and
 * every intermediate tensor is disposed right after its last use, so a run
 * leaves nothing behind but the values asked for. With `differentiable`, nodes
 * go through `engine.runKernel` instead, so the replay is recorded on tfjs's
 * gradient tape and `tf.grads` can differentiate it with respect to its inputs
 * and parameters.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../errors.js';
import { engine, type KernelInputs } from '../backend/tfjs_internals.js';
import { rootValues, type Graph, type Node, type ValueId } from '../ir/graph.js';
import { RANDOM_KERNELS } from '../trace/random_distribution.js';
import { differentiableFusedRunner } from './differentiable_fused_kernels.js';
import type { RandomSource } from './random_source.js';

/** How nodes are executed. */
export interface InterpreterOptions {
  /** Route kernels through `engine.runKernel` so tfjs can differentiate the replay. */
  differentiable?: boolean;
}

/** The tensors a run needs from outside the graph. */
export interface RunFeeds {
  /** One tensor per graph input, in order. */
  inputs: readonly tf.Tensor[];
  /** Parameter tensors by name. */
  params: ReadonlyMap<string, tf.Tensor>;
  /** The generator for random pseudo-kernels. */
  random: RandomSource;
}

type NodeRunner = (inputs: tf.Tensor[], feeds: RunFeeds) => tf.Tensor[];

interface Step {
  node: Node;
  run: NodeRunner;
  /** Values whose last use is this step. */
  frees: ValueId[];
}

function describeNode(node: Node): string {
  return `node #${node.id} ${node.kernel}${node.annotations.layer ? ` in layer '${node.annotations.layer}'` : ''}`;
}

function kernelInputs(node: Node, inputs: tf.Tensor[]): KernelInputs {
  if (node.inputNames === null) return inputs;
  const named: Record<string, tf.Tensor> = {};
  node.inputNames.forEach((name, i) => (named[name] = inputs[i]!));
  return named;
}

function randomRunner(node: Node): NodeRunner {
  const shape = node.attrs.shape as number[];
  const n = shape.reduce((a, b) => a * b, 1);
  switch (node.kernel) {
    case RANDOM_KERNELS.randomUniform: {
      const { minval, maxval } = node.attrs as { minval: number; maxval: number };
      return (_, feeds) => [tf.tensor(feeds.random.uniform(n, minval, maxval), shape, 'float32')];
    }
    case RANDOM_KERNELS.randomNormal:
    case RANDOM_KERNELS.truncatedNormal: {
      const { mean, stddev } = node.attrs as { mean: number; stddev: number };
      const truncated = node.kernel === RANDOM_KERNELS.truncatedNormal;
      return (_, feeds) => [tf.tensor(feeds.random.normal(n, mean, stddev, truncated), shape, 'float32')];
    }
    default:
      throw new PoptfjsError(`unknown poptfjs kernel ${node.kernel} (${describeNode(node)})`, { type: 'runtime' });
  }
}

function directRunner(node: Node): NodeRunner {
  const kernel = tf.getKernel(node.kernel, tf.getBackend());
  if (!kernel) {
    throw new PoptfjsError(
      `${describeNode(node)}: kernel '${node.kernel}' is not registered for backend '${tf.getBackend()}'`,
      { type: 'compile', location: node.annotations.layer ?? node.kernel },
    );
  }
  const eng = engine();
  const attrs = node.attrs as tf.NamedAttrMap;
  return (inputs) => {
    const out = kernel.kernelFunc({ inputs: kernelInputs(node, inputs) as tf.NamedTensorInfoMap, attrs, backend: eng.backend });
    const infos = Array.isArray(out) ? out : [out];
    return infos.map((info) => (info instanceof tf.Tensor ? info : eng.makeTensorFromTensorInfo(info)));
  };
}

function engineRunner(node: Node): NodeRunner {
  const fused = differentiableFusedRunner(node);
  if (fused) return fused;
  const eng = engine();
  return (inputs) => {
    const out = eng.runKernel(node.kernel, kernelInputs(node, inputs), node.attrs as Record<string, unknown>);
    return Array.isArray(out) ? out : [out];
  };
}

/** Runs one graph, repeatedly. Call {@link GraphInterpreter.dispose} when done. */
export class GraphInterpreter {
  private readonly steps: Step[];
  private readonly constants = new Map<ValueId, tf.Tensor>();
  private readonly roots: ValueId[];

  constructor(readonly graph: Graph, options: InterpreterOptions = {}) {
    this.roots = [...new Set(rootValues(graph))];
    const rootSet = new Set(this.roots);
    const lastUse = new Map<ValueId, number>();
    graph.nodes.forEach((node, i) => {
      for (const id of node.inputs) lastUse.set(id, i);
      for (const id of node.outputs) if (!lastUse.has(id)) lastUse.set(id, i);
    });
    const frees: ValueId[][] = graph.nodes.map(() => []);
    for (const [id, step] of lastUse) {
      if (graph.values[id]!.source.kind === 'node' && !rootSet.has(id)) frees[step]!.push(id);
    }
    this.steps = graph.nodes.map((node, i) => ({
      node,
      run: node.kernel.startsWith('poptfjs.') ? randomRunner(node) : options.differentiable ? engineRunner(node) : directRunner(node),
      frees: frees[i]!,
    }));
    for (const v of graph.values) {
      if (v.source.kind === 'constant') {
        this.constants.set(v.id, tf.keep(tf.tensor(v.source.data as tf.TensorLike, [...v.shape], v.dtype)));
      }
    }
  }

  /** The values {@link GraphInterpreter.run} returns, in order: outputs, loss, gradients, assignments. */
  get rootValues(): readonly ValueId[] {
    return this.roots;
  }

  /**
   * Runs the graph and returns the tensors of `wanted` values (by default the
   * graph's roots). The caller owns the returned tensors.
   */
  run(feeds: RunFeeds, wanted: readonly ValueId[] = this.roots): Map<ValueId, tf.Tensor> {
    const { graph } = this;
    if (feeds.inputs.length !== graph.inputs.length) {
      throw new PoptfjsError(`the graph takes ${graph.inputs.length} input(s), got ${feeds.inputs.length}`, { type: 'runtime' });
    }
    const live = new Map<ValueId, tf.Tensor>();
    const external = new Set<ValueId>();
    const lookup = (id: ValueId): tf.Tensor => {
      const t = live.get(id);
      if (t) return t;
      const v = graph.values[id]!;
      let ext: tf.Tensor | undefined;
      if (v.source.kind === 'constant') ext = this.constants.get(id);
      else if (v.source.kind === 'input') ext = feeds.inputs[v.source.index];
      else if (v.source.kind === 'param') ext = feeds.params.get(v.source.name);
      if (!ext) throw new PoptfjsError(`no tensor for %${id} (${v.source.kind}${v.source.kind === 'param' ? ` '${v.source.name}'` : ''})`, { type: 'runtime' });
      external.add(id);
      return ext;
    };
    const wantedSet = new Set(wanted);
    try {
      for (const step of this.steps) {
        const inputs = step.node.inputs.map(lookup);
        let outputs: tf.Tensor[];
        try {
          outputs = step.run(inputs, feeds);
        } catch (error) {
          if (error instanceof PoptfjsError) throw error;
          throw new PoptfjsError(`${describeNode(step.node)} failed: ${error instanceof Error ? error.message : String(error)}`, {
            type: 'runtime',
            location: step.node.annotations.layer ?? step.node.kernel,
            cause: error,
          });
        }
        step.node.outputs.forEach((id, i) => live.set(id, outputs[i]!));
        for (const id of step.frees) {
          if (wantedSet.has(id)) continue;
          live.get(id)?.dispose();
          live.delete(id);
        }
      }
      const result = new Map<ValueId, tf.Tensor>();
      for (const id of wanted) {
        const t = live.get(id);
        // Inputs, parameters and constants handed back are cloned so the caller owns what it gets.
        result.set(id, t ?? tf.clone(lookup(id)));
        live.delete(id);
      }
      return result;
    } finally {
      for (const t of live.values()) t.dispose();
    }
  }

  /** Frees the constants uploaded for this graph. */
  dispose(): void {
    for (const t of this.constants.values()) t.dispose();
    this.constants.clear();
  }
}
