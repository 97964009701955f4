/**
 * A tfjs model rebuilt from the IR: what `load()` hands back as
 * `executor.model` when the executable was exported with its model.
 *
 * The model is a functional `tf.LayersModel` with one layer, an
 * {@link ExecutableGraphLayer}, that replays the model's forward pass as it
 * was traced: the same kernels with the same attributes, through tfjs's
 * engine, so the model runs and trains in plain tfjs, traces to the same IR,
 * and saves and loads in tfjs's model format (the layer is registered with
 * tfjs's serialization; its configuration holds the forward graph, the
 * micro-batch size and the parameters as a hex-encoded protobuf
 * `ExecutableGraphLayerConfig` message, as tfjs rewrites the case of other
 * strings in a model.json). Its weights are the model's parameters.
 *
 * The replay computes what the traced pass computed, whatever the `training`
 * flag it is called with (a model traced for training keeps its dropout); in
 * training mode it also writes the buffers the pass updated. It runs on
 * batches of the traced micro-batch size, or of a multiple of it when every
 * output is batch-major (the batch is then split and the outputs joined).
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { engine, type KernelInputs } from '../backend/tfjs_internals.js';
import { eliminateDeadCode } from '../ir/dead_code.js';
import { constantData, type Graph, type Node, type ValueId } from '../ir/graph.js';
import { differentiableFusedRunner } from '../trace/differentiable_fused_kernels.js';
import { decodeMessage, encodeMessage, Messages } from '../proto/executable_proto.js';
import type { TensorSignature } from '../executable/executable.js';
import { graphFromMessage, graphMessage } from '../proto/graph_message.js';
import { parameterSpecMessages, parameterSpecsFromMessages, type ParameterSpec } from '../files/parameter_spec.js';
import { RANDOM_KERNELS } from '../trace/random_distribution.js';

/**
 * The forward pass of a traced graph over its first `inputCount` inputs: the
 * nodes its outputs and buffer writes need, without the loss and the backward
 * pass. An error if the outputs need a later input (a target, the loss scale).
 */
export function forwardGraph(graph: Graph, inputCount: number): Graph {
  const needed = new Set<ValueId>();
  const stack: ValueId[] = [...graph.roles.outputs, ...graph.assignments.map((a) => a.value)];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (needed.has(id)) continue;
    needed.add(id);
    const source = graph.values[id]!.source;
    if (source.kind === 'input' && source.index >= inputCount) {
      throw new PoptfjsError(
        `the model's outputs depend on graph input ${source.index} ('${source.name}'), which is not one of its ${inputCount} input(s); ` +
          'the model cannot be rebuilt from its trace: export it with { exportModel: false }',
        { type: 'export' },
      );
    }
    if (source.kind === 'node') stack.push(...graph.nodes[source.node]!.inputs);
  }
  return eliminateDeadCode({ ...graph, inputs: graph.inputs.slice(0, inputCount), roles: { outputs: graph.roles.outputs }, assignments: graph.assignments });
}

/** The serialized configuration of an {@link ExecutableGraphLayer}. */
export interface ExecutableGraphConfig {
  /** The forward graph, micro-batch size and parameters, as a hex-encoded protobuf `ExecutableGraphLayerConfig` message. */
  executableGraph: string;
}

type LayerArgs = NonNullable<ConstructorParameters<typeof tf.layers.Layer>[0]>;

function kernelInputs(node: Node, inputs: tf.Tensor[]): KernelInputs {
  if (node.inputNames === null) return inputs;
  const named: Record<string, tf.Tensor> = {};
  node.inputNames.forEach((name, i) => (named[name] = inputs[i]!));
  return named;
}

/** Runs one node as tfjs ops, so the engine records it (and a trace sees the same kernel). */
function runNode(node: Node, inputs: tf.Tensor[]): tf.Tensor[] {
  const shape = node.attrs.shape as number[];
  switch (node.kernel) {
    case RANDOM_KERNELS.randomUniform:
      return [tf.randomUniform(shape, node.attrs.minval as number, node.attrs.maxval as number)];
    case RANDOM_KERNELS.randomNormal:
      return [tf.randomNormal(shape, node.attrs.mean as number, node.attrs.stddev as number)];
    case RANDOM_KERNELS.truncatedNormal:
      return [tf.truncatedNormal(shape, node.attrs.mean as number, node.attrs.stddev as number)];
  }
  const fused = differentiableFusedRunner(node);
  if (fused) return fused(inputs);
  const out = engine().runKernel(node.kernel, kernelInputs(node, inputs), node.attrs as Record<string, unknown>);
  return Array.isArray(out) ? out : [out];
}

/** A layer that replays a traced forward graph (see the module comment). */
export class ExecutableGraphLayer extends tf.layers.Layer {
  /** The name tfjs's serialization knows the layer by (`poptfjs>ExecutableGraph`). */
  static readonly className = 'ExecutableGraph';
  private readonly encoded: string;
  private readonly graph: Graph;
  private readonly microBatchSize: number;
  private readonly parameterSpecs: readonly ParameterSpec[];
  private parameterVariables: tf.LayerVariable[] = [];
  private sharedFrom: ExecutableGraphLayer | undefined;

  constructor(args: ExecutableGraphConfig & Pick<LayerArgs, 'name' | 'trainable' | 'dtype'>) {
    super({ name: args.name, trainable: args.trainable, dtype: args.dtype });
    const where = `layer '${this.name}'`;
    if (typeof args.executableGraph !== 'string' || !/^([0-9a-f]{2})*$/.test(args.executableGraph)) {
      throw new PoptfjsError(`${where}: its configuration has no hex-encoded executableGraph`, { type: 'executor' });
    }
    this.encoded = args.executableGraph;
    const config = decodeMessage(Messages.ExecutableGraphLayerConfig, Buffer.from(args.executableGraph, 'hex'), where);
    if (!config.forward_graph) throw new PoptfjsError(`${where}: its configuration has no forward graph`, { type: 'executor' });
    this.graph = graphFromMessage(config.forward_graph, where);
    this.microBatchSize = config.micro_batch_size;
    this.parameterSpecs = parameterSpecsFromMessages(config.parameters, where);
  }

  /** A layer replaying `graph` with `parameters` as its weights. */
  static fromGraph(graph: Graph, parameters: readonly ParameterSpec[], microBatchSize: number, name?: string): ExecutableGraphLayer {
    const config = encodeMessage(Messages.ExecutableGraphLayerConfig, {
      forward_graph: graphMessage(graph),
      micro_batch_size: microBatchSize,
      parameters: parameterSpecMessages(parameters),
    });
    return new ExecutableGraphLayer({ executableGraph: Buffer.from(config).toString('hex'), ...(name !== undefined ? { name } : {}) });
  }

  /** The traced forward graph this layer replays. */
  get forwardGraph(): Graph {
    return this.graph;
  }

  /** The layer's weights, one per parameter, in trace order. */
  get parameters(): readonly tf.LayerVariable[] {
    return this.parameterVariables;
  }

  /**
   * Makes this layer use the weights of `other` (the models rebuilt from
   * exports of one tfjs model share their weights, as the wrappers of that
   * model did). Returns false, and keeps its own weights, if their parameters differ.
   */
  shareWeightsOf(other: ExecutableGraphLayer): boolean {
    const mine = this.parameterSpecs;
    const theirs = other.parameterSpecs;
    const same =
      mine.length === theirs.length &&
      mine.every(
        (p, i) =>
          p.dtype === theirs[i]!.dtype &&
          p.trainable === theirs[i]!.trainable &&
          p.shape.length === theirs[i]!.shape.length &&
          p.shape.every((d, k) => d === theirs[i]!.shape[k]),
      );
    if (same) this.sharedFrom = other;
    return same;
  }

  override build(inputShape: tf.Shape | tf.Shape[]): void {
    if (this.sharedFrom) {
      this.parameterVariables = [...this.sharedFrom.parameterVariables];
      this.trainableWeights = this.parameterVariables.filter((v) => v.trainable);
      this.nonTrainableWeights = this.parameterVariables.filter((v) => !v.trainable);
    } else {
      this.parameterVariables = this.parameterSpecs.map((p) => this.addWeight(layerNameOf(p.name), [...p.shape], p.dtype, tf.initializers.zeros(), undefined, p.trainable));
    }
    super.build(inputShape);
  }

  override computeOutputShape(): tf.Shape | tf.Shape[] {
    const micro = this.microBatchSize;
    const shapes = this.graph.roles.outputs.map((id): tf.Shape => {
      const shape = this.graph.values[id]!.shape;
      return shape.length > 0 && shape[0] === micro ? [null, ...shape.slice(1)] : [...shape];
    });
    return shapes.length === 1 ? shapes[0]! : shapes;
  }

  override call(inputs: tf.Tensor | tf.Tensor[], kwargs: Record<string, unknown>): tf.Tensor | tf.Tensor[] {
    const xs = Array.isArray(inputs) ? inputs : [inputs];
    const training = kwargs.training === true;
    const micro = this.microBatchSize;
    const batch = xs[0]?.shape[0];
    const outputs = tf.tidy(() => {
      if (batch === undefined || batch === micro || this.graph.inputs.every((id) => this.graph.values[id]!.shape[0] !== micro)) return this.replay(xs, training);
      const batchMajor = this.graph.roles.outputs.every((id) => this.graph.values[id]!.shape[0] === micro);
      if (!batchMajor || batch % micro !== 0 || xs.some((x) => x.shape[0] !== batch)) {
        throw new PoptfjsError(`layer '${this.name}' replays a model traced on batches of ${micro}; it runs on batches of ${micro} or a multiple of it, not ${batch}`, {
          type: 'executor',
        });
      }
      const chunks = Array.from({ length: batch / micro }, (_, k) =>
        this.replay(
          xs.map((x) => tf.slice(x, [k * micro], [micro])),
          training,
        ),
      );
      return chunks[0]!.map((_, o) => tf.concat(chunks.map((c) => c[o]!)));
    });
    return outputs.length === 1 ? outputs[0]! : outputs;
  }

  /** Runs the graph on one micro-batch; returns the outputs and writes the buffers in training mode. */
  private replay(xs: readonly tf.Tensor[], training: boolean): tf.Tensor[] {
    const { graph } = this;
    const weights = new Map(this.parameterSpecs.map((p, i) => [p.name, this.parameterVariables[i]!]));
    const computed = new Map<ValueId, tf.Tensor>();
    const tensorOf = (id: ValueId): tf.Tensor => {
      const known = computed.get(id);
      if (known) return known;
      const v = graph.values[id]!;
      let t: tf.Tensor;
      switch (v.source.kind) {
        case 'input':
          t = xs[v.source.index]!;
          break;
        case 'param':
          t = weights.get(v.source.name)!.read();
          break;
        case 'constant':
          t = tf.tensor(constantData(v) as tf.TensorLike, [...v.shape], v.dtype);
          break;
        case 'node':
          throw new PoptfjsError(`layer '${this.name}': value %${id} is used before node #${v.source.node} makes it`, { type: 'executor' });
      }
      computed.set(id, t);
      return t;
    };
    for (const node of graph.nodes) {
      const outs = runNode(node, node.inputs.map(tensorOf));
      node.outputs.forEach((id, k) => computed.set(id, outs[k]!));
    }
    if (training) for (const a of graph.assignments) weights.get(a.param)?.write(tensorOf(a.value));
    return graph.roles.outputs.map((id) => {
      const t = tensorOf(id);
      return graph.values[id]!.source.kind === 'node' ? t : tf.clone(t);
    });
  }

  override getConfig(): tf.serialization.ConfigDict {
    return { ...super.getConfig(), executableGraph: this.encoded };
  }
}

tf.serialization.registerClass(ExecutableGraphLayer, 'poptfjs');

/** A tfjs model rebuilt from a traced forward graph, and the layer that replays it. */
export interface ReconstructedModel {
  readonly model: tf.LayersModel;
  readonly layer: ExecutableGraphLayer;
}

/**
 * `name` as tfjs-layers accepts it in a layer's, a weight's or an input's name (a letter
 * or digit, then letters, digits and `-._/`): each run of other characters
 * becomes `_`, and a name that does not start with a letter or digit gets a
 * `model` prefix ('anonymous function' becomes 'anonymous_function').
 */
function layerNameOf(name: string): string {
  const replaced = name.replace(/[^-A-Za-z0-9._/]+/g, '_');
  return /^[A-Za-z0-9]/.test(replaced) ? replaced : `model${replaced}`;
}

/**
 * Rebuilds a functional tfjs model replaying `graph` (a forward graph, see
 * {@link forwardGraph}) with `parameters` as its weights, taking inputs like
 * `signature` (one micro-batch each). The model is named `name`; its layer and
 * inputs are named after it as tfjs allows (see {@link layerNameOf}). With
 * `shareWith`, the model uses that layer's weights when the parameters are the same.
 */
export function reconstructModel(
  graph: Graph,
  parameters: readonly ParameterSpec[],
  signature: readonly TensorSignature[],
  microBatchSize: number,
  name: string,
  shareWith?: ExecutableGraphLayer,
): ReconstructedModel {
  const layerName = layerNameOf(name);
  const layer = ExecutableGraphLayer.fromGraph(graph, parameters, microBatchSize, `${layerName}_executable_graph`);
  if (shareWith) layer.shareWeightsOf(shareWith);
  const inputs = signature.map((s, i) =>
    tf.input({
      batchShape: s.shape.length > 0 && s.shape[0] === microBatchSize ? [null, ...s.shape.slice(1)] : [...s.shape],
      dtype: s.dtype,
      name: `${layerName}_input${i}`,
    }),
  );
  const outputs = layer.apply(inputs.length === 1 ? inputs[0]! : inputs) as tf.SymbolicTensor | tf.SymbolicTensor[];
  return { model: tf.model({ inputs, outputs, name }), layer };
}
