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
import { PoptfjsError } from '../common/errors.js';
import { engine, type KernelInputs } from '../backend/tfjs_internals.js';
import { constantData, rootValues, type Graph, type Node, type NodeId, type ValueId } from '../ir/graph.js';
import { weakFloatValues } from '../precision/float16_inference.js';
import { withFloat16Arithmetic } from './float16_arithmetic.js';
import type { Float16Arithmetic } from '../executable/float16_arithmetic_settings.js';
import { differentiableFusedRunner } from '../trace/differentiable_fused_kernels.js';
import type { RandomSource } from '../executable/random_source.js';
import type { NodeRun, RunFeeds } from './run_feeds.js';
import { describeNode } from './node_description.js';
import { isRandomDraw, POPTFJS_KERNELS, RANDOM_KERNELS } from '../backend/kernel_catalogue/kernel_catalogue.js';
import { printNodeValue } from './tensor_print.js';
import { asksFusedMultiplyAdd } from '../backend/multiply_add_attribute.js';
import { computeOnWasmThreads, wasmComputeThreads } from '../backend/wasm_thread_pool.js';
import { largeKernelsDone, largeKernelThreads, worthThePool } from './wasm_thread_choice.js';

/** How nodes are executed. */
export interface InterpreterOptions {
  /** Route kernels through `engine.runKernel` so tfjs can differentiate the replay. */
  differentiable?: boolean;
  /**
   * Compute float16 values as the simulated device does (round float16
   * results, stochastic rounding, float16 partials, floating-point
   * exceptions). Not for differentiable replays: rounding is not differentiable.
   */
  float16?: Float16Arithmetic;
  /** Called before each kernel runs (a check that the memory it is about to take is there). */
  beforeKernel?: (node: Node) => void;
  /** Where print nodes (`ops.ipuPrintTensor`) print their value; default: the `op` logger. */
  printTensor?: (node: Node, value: tf.Tensor) => void;
  /** Called after each kernel runs, with the values it read and made (the engine's `debug.trace`). */
  afterKernel?: (node: Node, inputs: readonly tf.Tensor[], outputs: readonly tf.Tensor[]) => void;
}

interface Step {
  node: Node;
  run: NodeRun;
  /** Whether the kernel computes on the wasm thread pool when it can (wasm_thread_choice.ts). */
  pooled: boolean;
}

function kernelInputs(node: Node, inputs: tf.Tensor[]): KernelInputs {
  const names = node.inputNames;
  if (names === null) return inputs;
  const named: Record<string, tf.Tensor> = {};
  for (let i = 0; i < names.length; i++) named[names[i]!] = inputs[i]!;
  return named;
}

/**
 * How a random pseudo-kernel draws its numbers from a generator: the one
 * place that maps its attributes to `RandomSource` calls, so the numbers of
 * worker IPUs, drawn on the main thread, are the interpreter's. Throws for an
 * unknown pseudo-kernel.
 */
export function randomDraw(node: Node): (random: RandomSource) => Float32Array {
  const shape = node.attrs.shape as number[];
  const n = shape.reduce((a, b) => a * b, 1);
  switch (node.kernel) {
    case RANDOM_KERNELS.randomUniform: {
      const { minval, maxval } = node.attrs as { minval: number; maxval: number };
      return (random) => random.uniform(n, minval, maxval);
    }
    case RANDOM_KERNELS.randomNormal:
    case RANDOM_KERNELS.truncatedNormal: {
      const { mean, stddev } = node.attrs as { mean: number; stddev: number };
      const truncated = node.kernel === RANDOM_KERNELS.truncatedNormal;
      return (random) => random.normal(n, mean, stddev, truncated);
    }
    default:
      throw new PoptfjsError(`unknown poptfjs kernel ${node.kernel} (${describeNode(node)})`, { type: 'runtime' });
  }
}

function randomRunner(node: Node): NodeRun {
  const draw = randomDraw(node);
  const shape = node.attrs.shape as number[];
  return (_, feeds) => [tf.tensor(draw(feeds.random), shape, 'float32')];
}

function directRunner(node: Node): NodeRun {
  const kernel = tf.getKernel(node.kernel, tf.getBackend());
  if (!kernel) {
    throw new PoptfjsError(`${describeNode(node)}: kernel '${node.kernel}' is not registered for backend '${tf.getBackend()}'`, {
      type: 'compile',
      location: node.annotations.layer ?? node.kernel,
    });
  }
  const eng = engine();
  const attrs = node.attrs as tf.NamedAttrMap;
  const tensor = (info: tf.TensorInfo): tf.Tensor => (info instanceof tf.Tensor ? info : eng.makeTensorFromTensorInfo(info));
  return (inputs) => {
    const out = kernel.kernelFunc({ inputs: kernelInputs(node, inputs) as tf.NamedTensorInfoMap, attrs, backend: eng.backend });
    if (!Array.isArray(out)) return [tensor(out)];
    const outputs: tf.Tensor[] = [];
    for (const info of out) outputs.push(tensor(info));
    return outputs;
  };
}

/** A print node's runner: runs it, then prints its value (`ops.ipuPrintTensor`) with `print`, each time it runs. */
function printingRunner(node: Node, run: NodeRun, print: (node: Node, value: tf.Tensor) => void): NodeRun {
  return (inputs, feeds) => {
    const outputs = run(inputs, feeds);
    print(node, outputs[0]!);
    return outputs;
  };
}

/** Runs a body graph of a control-flow node on `inputs`; returns its outputs in order, each a tensor of its own. */
function runBody(body: GraphInterpreter, inputs: tf.Tensor[], feeds: RunFeeds): tf.Tensor[] {
  const results = body.run({ ...feeds, inputs });
  const handed = new Set<ValueId>();
  return body.graph.roles.outputs.map((id) => {
    const t = results.get(id)!;
    if (handed.has(id)) return tf.clone(t);
    handed.add(id);
    return t;
  });
}

/**
 * The runner of a control-flow node over the interpreters of its bodies:
 * `poptfjs.ForLoop` runs its body `count` times, each run on the previous
 * one's outputs and the values it reads from the enclosing graph;
 * `poptfjs.Cond` reads its condition and runs the body it picks.
 */
function controlFlowRunner(node: Node, bodies: readonly GraphInterpreter[]): NodeRun {
  if (node.kernel === POPTFJS_KERNELS.forLoop) {
    const body = bodies[0]!;
    const count = node.attrs.count as number;
    const carriedCount = node.outputs.length;
    return (inputs, feeds) => {
      const captured = inputs.slice(carriedCount);
      let carried = inputs.slice(0, carriedCount);
      if (count === 0) return carried.map((t) => tf.clone(t));
      for (let i = 0; i < count; i++) {
        const next = runBody(body, [...carried, ...captured], feeds);
        if (i > 0) tf.dispose(carried);
        carried = next;
      }
      return carried;
    };
  }
  const [thenBody, elseBody] = bodies as [GraphInterpreter, GraphInterpreter];
  const thenCount = thenBody.graph.inputs.length;
  return (inputs, feeds) => {
    const [condition, ...rest] = inputs;
    return condition!.dataSync()[0] ? runBody(thenBody, rest.slice(0, thenCount), feeds) : runBody(elseBody, rest.slice(thenCount), feeds);
  };
}

function engineRunner(node: Node): NodeRun {
  const fused = differentiableFusedRunner(node);
  if (fused) return fused;
  const eng = engine();
  return (inputs) => {
    const out = eng.runKernel(node.kernel, kernelInputs(node, inputs), node.attrs as Record<string, unknown>);
    return Array.isArray(out) ? out : [out];
  };
}

/**
 * The tensors of one run (one micro-batch): each value lives from the node
 * that makes it until its last consumer has run, so nodes can run in any
 * order that respects their inputs, spread over several calls of
 * {@link GraphInterpreter.runNodes}. Root values stay until taken.
 */
export class GraphEnvironment {
  /** The tensor of each computed value not yet freed or taken, by value id. */
  private readonly live: (tf.Tensor | undefined)[];
  private readonly remaining: Int32Array;
  /** The takes left of each root value (1 for the others, which are taken at most once). */
  private readonly takesLeft: Int32Array;

  /** @internal Use {@link GraphInterpreter.environment}. */
  constructor(
    private readonly interpreter: GraphInterpreter,
    readonly feeds: RunFeeds,
    uses: Int32Array,
    takes: Int32Array,
    private readonly roots: Uint8Array,
  ) {
    this.live = new Array(uses.length).fill(undefined);
    this.remaining = uses.slice();
    this.takesLeft = takes.slice();
  }

  /** The tensor of a value for a node input: a live intermediate, or an input, parameter or constant. */
  input(id: ValueId): tf.Tensor {
    return this.live[id] ?? this.interpreter.external(id, this.feeds);
  }

  /** @internal Stores the outputs of a node. */
  store(id: ValueId, t: tf.Tensor): void {
    this.live[id] = t;
    if (this.remaining[id] === 0 && this.roots[id] === 0) this.release(id);
  }

  /** @internal Counts one use of a value by a node and frees it after its last use (a root value once it is also taken). */
  used(id: ValueId): void {
    if (this.live[id] === undefined) return;
    if (--this.remaining[id]! <= 0 && (this.roots[id] === 0 || this.takesLeft[id] === 0)) this.release(id);
  }

  private release(id: ValueId): void {
    this.live[id]!.dispose();
    this.live[id] = undefined;
  }

  /** True if the value has been computed and not yet freed. */
  has(id: ValueId): boolean {
    return this.live[id] !== undefined;
  }

  /**
   * Hands a computed root value (or a copy of an input, parameter or
   * constant) to the caller. A value that is several roots at once (an output
   * that is also written to a buffer) is handed out once per role: copies
   * first, the tensor itself last. A value that nodes still to run read (a
   * buffer written by one unit and read by a later one) is handed out as a
   * copy and freed after its last use.
   */
  take(id: ValueId): tf.Tensor {
    const t = this.live[id];
    if (!t) return tf.clone(this.interpreter.external(id, this.feeds));
    const left = --this.takesLeft[id]!;
    if (left > 0 || this.remaining[id]! > 0) return tf.clone(t);
    this.live[id] = undefined;
    return t;
  }

  /**
   * @internal Hands a computed value to the caller as it is, for an
   * environment in which the nodes still to read it will not run (see
   * {@link GraphInterpreter.computeValues}); an input, parameter or constant
   * is handed out as a copy.
   */
  detach(id: ValueId): tf.Tensor {
    const t = this.live[id];
    if (!t) return tf.clone(this.interpreter.external(id, this.feeds));
    this.live[id] = undefined;
    return t;
  }

  /** Frees every tensor still held. */
  dispose(): void {
    const live = this.live;
    for (let id = 0; id < live.length; id++) {
      live[id]?.dispose();
      live[id] = undefined;
    }
  }
}

/** Runs one graph, repeatedly. Call {@link GraphInterpreter.dispose} when done. */
export class GraphInterpreter {
  private readonly steps: Step[];
  private readonly constants = new Map<ValueId, tf.Tensor>();
  private readonly roots: ValueId[];
  /** 1 for each root value, by value id. */
  private readonly rootFlags: Uint8Array;
  private readonly uses: Int32Array;
  /** How many times each root value is taken (once per role), 1 for the others, by value id. */
  private readonly rootTakes: Int32Array;
  private readonly order: NodeId[];
  private readonly beforeKernel: ((node: Node) => void) | undefined;
  private readonly afterKernel: InterpreterOptions['afterKernel'];
  /** The interpreters of the control-flow nodes' bodies. */
  private readonly bodies: GraphInterpreter[] = [];
  /**
   * Whether the graph's convolutions run on poptfjs's routines (marked for fused multiply-adds): its kernels then
   * leave XNNPACK's pool off ({@link computeOnWasmThreads}).
   */
  private readonly routinesOnly: boolean;

  constructor(
    readonly graph: Graph,
    options: InterpreterOptions = {},
  ) {
    this.beforeKernel = options.beforeKernel;
    this.afterKernel = options.afterKernel;
    this.routinesOnly = graph.nodes.some((node) => asksFusedMultiplyAdd(node.attrs));
    const roles = rootValues(graph);
    this.roots = [...new Set(roles)];
    this.rootFlags = new Uint8Array(graph.values.length);
    for (const id of this.roots) this.rootFlags[id] = 1;
    this.rootTakes = new Int32Array(graph.values.length).fill(1);
    for (const id of this.roots) this.rootTakes[id] = 0;
    for (const id of roles) this.rootTakes[id]!++;
    this.uses = new Int32Array(graph.values.length);
    this.order = graph.nodes.map((n) => n.id);
    for (const node of graph.nodes) for (const id of node.inputs) this.uses[id]!++;
    const weak = options.float16 ? weakFloatValues(graph) : new Set<ValueId>();
    this.steps = graph.nodes.map((node) => {
      const run = this.nodeRunner(node, options);
      const computed = options.float16 ? withFloat16Arithmetic(graph, node, run, options.float16, weak) : run;
      const printed = node.kernel === POPTFJS_KERNELS.ipuPrintTensor ? printingRunner(node, computed, options.printTensor ?? printNodeValue) : computed;
      return { node, run: printed, pooled: worthThePool(graph, node) };
    });
    for (const v of graph.values) {
      if (v.source.kind === 'constant') {
        this.constants.set(v.id, tf.keep(tf.tensor(constantData(v) as tf.TensorLike, [...v.shape], v.dtype)));
      }
    }
  }

  private nodeRunner(node: Node, options: InterpreterOptions): NodeRun {
    if (isRandomDraw(node.kernel)) return randomRunner(node);
    if (node.bodies) {
      // `beforeKernel` and `afterKernel` know the nodes of this graph only: a body's nodes run under their control-flow node.
      const { beforeKernel: _outerOnly, afterKernel: _outerTraceOnly, ...bodyOptions } = options;
      const bodies = node.bodies.map((body) => new GraphInterpreter(body, bodyOptions));
      this.bodies.push(...bodies);
      return controlFlowRunner(node, bodies);
    }
    return options.differentiable ? engineRunner(node) : directRunner(node);
  }

  /** The values {@link GraphInterpreter.run} returns by default: outputs, loss, gradients, assignments. */
  get rootValues(): readonly ValueId[] {
    return this.roots;
  }

  /** @internal True if the value is one the graph hands back. */
  isRoot(id: ValueId): boolean {
    return this.rootFlags[id] === 1;
  }

  /** @internal The tensor of an input, parameter or constant. */
  external(id: ValueId, feeds: RunFeeds): tf.Tensor {
    const v = this.graph.values[id]!;
    let t: tf.Tensor | undefined;
    if (v.source.kind === 'constant') t = this.constants.get(id);
    else if (v.source.kind === 'input') t = feeds.inputs[v.source.index];
    else if (v.source.kind === 'param') t = feeds.params.get(v.source.name);
    else t = feeds.derived?.get(id);
    if (!t) {
      const what = v.source.kind === 'param' ? `parameter '${v.source.name}'` : v.source.kind === 'node' ? 'an intermediate value not computed yet' : v.source.kind;
      throw new PoptfjsError(`no tensor for %${id} (${what})`, { type: 'runtime' });
    }
    return t;
  }

  /** A fresh environment for one run over `feeds`. */
  environment(feeds: RunFeeds): GraphEnvironment {
    if (feeds.inputs.length !== this.graph.inputs.length) {
      throw new PoptfjsError(`the graph takes ${this.graph.inputs.length} input(s), got ${feeds.inputs.length}`, { type: 'runtime' });
    }
    return new GraphEnvironment(this, feeds, this.uses, this.rootTakes, this.rootFlags);
  }

  /**
   * Runs the given nodes, in order, in `env` (skipping those whose outputs
   * the feeds hold as derived values and the other nodes they were made
   * ahead by), the large kernels on the wasm thread
   * pool when it can be switched, the others on this thread. Where the large
   * kernels compute is asked once per run, at its first large kernel, and
   * the machine's CPU counters are read there and at the end of the run (the
   * cores other processes keep busy meanwhile, see wasm_thread_choice.ts): a
   * run of small kernels alone does not read them.
   */
  runNodes(nodes: readonly NodeId[], env: GraphEnvironment): void {
    const outer = wasmComputeThreads();
    try {
      this.runSteps(nodes, env, outer !== undefined);
    } finally {
      if (outer !== undefined) computeOnWasmThreads(outer);
    }
  }

  private runSteps(nodes: readonly NodeId[], env: GraphEnvironment, switchable: boolean): void {
    const { feeds } = env;
    const { derived, ahead } = feeds;
    let large: number | undefined;
    try {
      for (const id of nodes) {
        const step = this.steps[id]!;
        const { node } = step;
        if (derived?.has(node.outputs[0]!) || ahead?.has(id)) continue;
        const inputs: tf.Tensor[] = [];
        for (const v of node.inputs) inputs.push(env.input(v));
        if (switchable) computeOnWasmThreads(step.pooled ? (large ??= largeKernelThreads() ?? 1) : 1, this.routinesOnly);
        this.beforeKernel?.(node);
        let outputs: tf.Tensor[];
        try {
          outputs = step.run(inputs, feeds);
        } catch (error) {
          if (error instanceof PoptfjsError) throw error;
          throw new PoptfjsError(`${describeNode(node)} failed: ${error instanceof Error ? error.message : String(error)}`, {
            type: 'runtime',
            location: node.annotations.layer ?? node.kernel,
            cause: error,
          });
        }
        this.afterKernel?.(node, inputs, outputs);
        for (const v of node.inputs) env.used(v);
        for (let i = 0; i < node.outputs.length; i++) env.store(node.outputs[i]!, outputs[i]!);
      }
    } finally {
      if (large !== undefined) largeKernelsDone();
    }
  }

  /**
   * Runs the whole graph and returns the tensors of `wanted` values (by
   * default the graph's roots). The caller owns the returned tensors.
   */
  run(feeds: RunFeeds, wanted: readonly ValueId[] = this.roots): Map<ValueId, tf.Tensor> {
    const env = this.environment(feeds);
    try {
      this.runNodes(this.order, env);
      const result = new Map<ValueId, tf.Tensor>();
      for (const id of new Set(wanted)) result.set(id, env.take(id));
      return result;
    } finally {
      env.dispose();
    }
  }

  /**
   * Runs `nodes`, which read no graph input, on `params` and returns the
   * tensors of `wanted` (the caller owns them, kept out of tfjs scopes).
   */
  computeValues(nodes: readonly NodeId[], params: ReadonlyMap<string, tf.Tensor>, random: RandomSource, wanted: readonly ValueId[]): Map<ValueId, tf.Tensor> {
    const env = new GraphEnvironment(this, { inputs: [], params, random }, this.uses, this.rootTakes, this.rootFlags);
    try {
      this.runNodes(nodes, env);
      // The other readers of these values run in other environments: the tensors are handed over, not copied.
      return new Map(wanted.map((id) => [id, tf.keep(env.detach(id))]));
    } finally {
      env.dispose();
    }
  }

  /** Frees the constants uploaded for this graph and its bodies. */
  dispose(): void {
    for (const t of this.constants.values()) t.dispose();
    this.constants.clear();
    for (const body of this.bodies) body.dispose();
  }
}
