/**
 * Planning an ONNX model (what PyTorch users export) without reading its
 * weights: the model file is decoded without its external data files, every
 * weight becomes a tensor with a shape and no values (initializer sizes come
 * from the proto), and the graph is imported on the shape-only backend and
 * compiled as `plan()` compiles a tfjs model.
 *
 * Placement: a model whose nodes carry PopART's `__ipu_number` attributes
 * (`Builder.virtualGraph`) runs each node on its IPU, as a pipeline of its
 * `__pipeline_stage`s (or of its IPUs when it has no stages); a model without
 * is split, with `ipus` above 1, into that many pipeline stages of nearly
 * equal simulated time, between the modules its nodes are named after
 * (`onnxModuleUnit`), or placed by the options' stages, which name them as a
 * search (`autoPlan`) prints them.
 */
import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { withShapeOnlyBackend } from '../backend/shape_only/shape_only_mode.js';
import { PoptfjsError } from '../common/errors.js';
import { compilePlan, PLAN_OPTIMIZERS, type Plan, type PlanInput, type PlanOptimizerName, type PlanTrace } from '../executor/model_plan.js';
import { applyPatterns, patternsFromSetting } from '../ir/patterns/patterns.js';
import { targetSpec } from '../ipu/target_spec.js';
import { modelFromBytes, type OnnxModel } from '../onnx/model_file.js';
import { declaredShape, importModel, type ImportedModel } from '../onnx/model_import.js';
import { NodeAttributes } from '../onnx/proto/node_attributes.js';
import { Options } from '../options/options.js';
import { PIPELINE_STAGE_ATTRIBUTE, VIRTUAL_GRAPH_ATTRIBUTE } from '../session/placement_attributes.js';
import { SessionOptions, sessionSettings } from '../session/session_options.js';
import { VirtualGraphMode } from '../session/session_enums.js';
import { virtualGraphPlacement } from '../session/virtual_graph_placement.js';
import type { ExecutionStrategy } from '../strategy/execution_strategy.js';
import { PipelinedExecutionSpec } from '../strategy/staged_execution.js';
import { StageSpec } from '../strategy/stages_and_phases.js';
import { Optimizer } from '../../optim/optimizer.js';
import { dirname } from 'node:path';
import { stageSplits, unitCosts } from './stage_splits.js';
import { onnxModuleUnit, unitGraph } from './split_units.js';

/** What {@link planOnnx} plans. */
export interface OnnxPlanRequest {
  /** Execution options (replication, accumulation, precision, target IPU, ...). */
  readonly options?: Options;
  /** The shapes (and dtypes) of the graph inputs, in order, one micro-batch each (default: their declared shapes). */
  readonly inputs?: readonly PlanInput[];
  /**
   * The micro-batch size: the first dimension of every graph input, in place
   * of the one the model declares (a number, or a name such as
   * `batch_size`); the other dimensions as declared. Not with `inputs`.
   */
  readonly batch?: number;
  /** For training: the name of the loss tensor of the graph (a model exported with its loss). */
  readonly loss?: string;
  /** For training: the optimizer by name (default `sgd`), or a function of the trained weights. */
  readonly optimizer?: PlanOptimizerName | ((weights: tf.Variable[]) => Optimizer);
  /** A model without placement attributes: split into this many pipeline stages of nearly equal time (default 1). */
  readonly ipus?: number;
  /**
   * Hold its float weights and inputs in float16, and compute in float16 what they feed, as PopTorch's
   * `model.half()` does (PopART's `GraphTransformer.convertFloatsToHalfs` converts the file the same way).
   */
  readonly float16?: boolean;
}

function onnxPlanError(message: string): PoptfjsError {
  return new PoptfjsError(`plan: ${message}`, { type: 'executor' });
}

/** The ONNX model at `source` (a file, or its bytes), decoded without reading its external data. */
export function readOnnxModel(source: string | Uint8Array): OnnxModel {
  if (typeof source === 'string') {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(source);
    } catch (error) {
      throw onnxPlanError(`cannot read the ONNX model '${source}': ${(error as Error).message}`);
    }
    return { ...modelFromBytes(bytes, { withoutExternalData: true, externalDataDirectory: dirname(source) }), path: source };
  }
  return modelFromBytes(source, { withoutExternalData: true });
}

/** The declared shapes of the graph inputs `names` with `batch` as their first dimension; other dimensions must be known. */
function batchedShapes(model: OnnxModel, names: readonly string[], batch: number): number[][] {
  if (!Number.isInteger(batch) || batch < 1) throw onnxPlanError(`batch must be a positive integer, got ${JSON.stringify(batch)}`);
  return names.map((name) => {
    const value = model.proto.graph!.input.find((v) => v.name === name)!;
    const declared = declaredShape(value);
    if (!declared || declared.length === 0)
      throw onnxPlanError(`graph input '${name}' declares no batch dimension (shape ${declared ? '[]' : 'unknown'}); give its shape in inputs`);
    const unknown = declared.slice(1).filter((d) => typeof d === 'string');
    if (unknown.length > 0)
      throw onnxPlanError(`graph input '${name}' has dimensions other than the batch that the model does not fix (${unknown.join(', ')}); give its shape in inputs`);
    return [batch, ...(declared.slice(1) as number[])];
  });
}

/** Refuses a loss that names no tensor of the model, listing its graph outputs (where an exported loss usually is). */
function checkLossTensor(model: OnnxModel, loss: unknown): void {
  const graph = model.proto.graph!;
  const outputs = graph.output.map((v) => `'${v.name}'`).join(', ');
  if (typeof loss !== 'string' || loss === '') throw onnxPlanError(`loss must be the name of the graph's loss tensor (its outputs: ${outputs}), got ${JSON.stringify(loss)}`);
  const tensors = new Set([...graph.node.flatMap((node) => node.output ?? []), ...graph.input.map((v) => v.name)]);
  if (!tensors.has(loss)) throw onnxPlanError(`the loss '${loss}' is no tensor of the model; its graph outputs: ${outputs}`);
}

/** True if any node of the model carries `attribute`. */
function hasAttribute(model: OnnxModel, attribute: string): boolean {
  return model.proto.graph!.node.some((node) => new NodeAttributes(node.attribute, node.name ?? '').has(attribute));
}

/**
 * The pipeline stages the PopART attributes of the ONNX model at `source`
 * (a path, or its bytes) make: its `__pipeline_stage`s, else its
 * `__ipu_number`s; 1 when its nodes carry neither. Its weights are not read.
 */
export function onnxPipelineStages(source: string | Uint8Array): number {
  const model = readOnnxModel(source);
  const values = (attribute: string) =>
    new Set(
      model.proto.graph!.node.flatMap((node) => {
        const attributes = new NodeAttributes(node.attribute, node.name ?? '');
        return attributes.has(attribute) ? [attributes.int(attribute)] : [];
      }),
    );
  const stages = values(PIPELINE_STAGE_ATTRIBUTE);
  return Math.max(1, stages.size > 0 ? stages.size : values(VIRTUAL_GRAPH_ATTRIBUTE).size);
}

/** What {@link onnxTrace} imports: the graph inputs' shapes (default: as declared), and for training the loss and the optimizer. */
export interface OnnxTraceRequest {
  readonly shapes?: readonly (readonly number[])[];
  /** The name of the graph's loss tensor: the model is imported for training. */
  readonly loss?: string;
  readonly optimizer?: OnnxPlanRequest['optimizer'];
  /** Its float weights and inputs in float16 (see {@link OnnxPlanRequest.float16}). */
  readonly float16?: boolean;
}

/** The graph inputs of `model` that are not initializers, by name. */
export function onnxGraphInputs(model: OnnxModel): string[] {
  const graph = model.proto.graph!;
  return graph.input.filter((v) => !graph.initializer.some((t) => t.name === v.name)).map((v) => v.name ?? '');
}

/** One sample's shape of each graph input of `model`: its declared shape without the first (batch) dimension. */
export function onnxSampleShapes(model: OnnxModel): number[][] {
  return batchedShapes(model, onnxGraphInputs(model), 1).map((shape) => shape.slice(1));
}

/**
 * The batch every graph input of `model` fixes as its first dimension, when
 * they all declare the same number there (a model exported without a dynamic
 * batch axis, whose reshapes may hold that batch); undefined when any is
 * symbolic.
 */
export function onnxFixedBatch(model: OnnxModel): number | undefined {
  const graph = model.proto.graph!;
  const firsts = onnxGraphInputs(model).map((name) => declaredShape(graph.input.find((v) => v.name === name)!)?.[0]);
  const first = firsts[0];
  return typeof first === 'number' && firsts.every((d) => d === first) ? first : undefined;
}

/**
 * `model` imported on the shape-only backend as a plan's trace, its weights
 * variables without values: for inference, or for training with
 * `request.loss` and the optimizer `request.optimizer` (default SGD) builds.
 */
export async function onnxTrace(model: OnnxModel, request: OnnxTraceRequest): Promise<PlanTrace> {
  const training = request.loss !== undefined;
  if (!training && request.optimizer !== undefined) throw onnxPlanError('an optimizer needs a loss: give the name of the loss tensor of the graph to plan training');
  if (training) checkLossTensor(model, request.loss);
  const graphInputs = onnxGraphInputs(model);
  const { shapes } = request;
  // Imported with shapes only; the weights (variables without values) go once the optimizer knows them.
  const { imported, optimizer } = await withShapeOnlyBackend(() => {
    const imported: ImportedModel = importModel(model, {
      withoutWeights: true,
      ...(shapes ? { inputShapeInfo: Object.fromEntries(shapes.map((shape, i) => [graphInputs[i]!, [...shape]])) } : {}),
      ...(training ? { training: { loss: request.loss! } } : {}),
    });
    try {
      if (!training) return { imported, optimizer: undefined };
      const weights = [...imported.variables.values()].filter((v) => v.trainable);
      const choice = request.optimizer ?? 'sgd';
      if (typeof choice === 'string' && !(choice in PLAN_OPTIMIZERS))
        throw onnxPlanError(`unknown optimizer '${choice}'; expected one of ${Object.keys(PLAN_OPTIMIZERS).join(', ')}`);
      const optimizer = typeof choice === 'function' ? choice(weights) : PLAN_OPTIMIZERS[choice](weights);
      if (!(optimizer instanceof Optimizer)) throw onnxPlanError('optimizer must return a poptfjs optimizer, e.g. (weights) => new optim.Adam(weights, { lr: 1e-3 })');
      return { imported, optimizer };
    } finally {
      imported.dispose();
    }
  });
  const { graph } = imported;
  const modelInputs = graph.inputs.filter((id) => id !== graph.roles.lossScale);
  const examples = modelInputs.map((id) => ({ shape: [...graph.values[id]!.shape], dtype: graph.values[id]!.dtype }));
  // In float16, the float weights and inputs are declared so and the compile infers what they make, as for `half(model)`.
  const float16 = request.float16
    ? {
        params: new Set(graph.values.flatMap((v) => (v.source.kind === 'param' && v.dtype === 'float32' ? [v.source.name] : []))),
        inputs: new Set(modelInputs.flatMap((id, i) => (graph.values[id]!.dtype === 'float32' ? [i] : []))),
      }
    : { params: new Set<string>(), inputs: new Set<number>() };
  return {
    graph,
    training,
    optimizer,
    name: model.proto.graph!.name || 'onnx',
    examples,
    microBatch: examples[0]?.shape[0] ?? 1,
    float16,
    float16Flagged: request.float16 !== true,
    weightNames: new Map(),
    parameters: graph.values.reduce((n, v) => n + (v.source.kind === 'param' ? v.shape.reduce((a, d) => a * d, 1) : 0), 0),
  };
}

/** True if `strategy` runs stages that name blocks (a configuration a search printed): an ONNX model's units must be blocks for it. */
function namesBlocks(strategy: ExecutionStrategy): boolean {
  return 'stages' in strategy && strategy.stages.some((stage) => stage.blocks.length > 0);
}

/**
 * Plans the ONNX model at `source` (a path, or the model's bytes) on the
 * simulated IPUs of `request.options` without reading its weights: its
 * external data files are never opened. See the module's doc for placement.
 */
export async function planOnnx(source: string | Uint8Array, request: OnnxPlanRequest = {}): Promise<Plan> {
  const model = readOnnxModel(source);
  const options = request.options ?? new Options();
  if (!(options instanceof Options)) throw onnxPlanError('options must be a poptfjs Options object');
  const ipus = request.ipus ?? 1;
  if (!Number.isInteger(ipus) || ipus < 1) throw onnxPlanError(`ipus must be a positive integer, got ${JSON.stringify(request.ipus)}`);
  const graphInputs = onnxGraphInputs(model);
  if (request.inputs !== undefined && request.inputs.length !== graphInputs.length) {
    throw onnxPlanError(`the model has ${graphInputs.length} graph input(s) (${graphInputs.join(', ')}); inputs gives ${request.inputs.length}`);
  }
  if (request.inputs !== undefined && request.batch !== undefined) throw onnxPlanError('give the micro-batch in inputs or as batch, not both');
  const shapes = request.inputs?.map((input) => [...input.shape]) ?? (request.batch !== undefined ? batchedShapes(model, graphInputs, request.batch) : undefined);
  const trace = await onnxTrace(model, {
    ...(shapes ? { shapes } : {}),
    ...(request.loss !== undefined ? { loss: request.loss } : {}),
    ...(request.optimizer ? { optimizer: request.optimizer } : {}),
    ...(request.float16 ? { float16: true } : {}),
  });
  const settings = options.settings;
  let graph = trace.graph;
  let strategy = settings.executionStrategy;
  if (hasAttribute(model, VIRTUAL_GRAPH_ATTRIBUTE)) {
    const placed = virtualGraphPlacement(
      graph,
      model.proto,
      sessionSettings(Object.assign(new SessionOptions(), { virtualGraphMode: VirtualGraphMode.Manual, enablePipelining: true })),
      Math.max(1, ipus),
    );
    graph = placed.graph;
    strategy = placed.strategy;
  } else if (ipus > 1 || namesBlocks(strategy)) {
    // The units (nodes) as blocks, after the IR patterns (the compile applies them again, to the same effect): split
    // into `ipus` stages, or placed by the stages of the options, which name units as a search prints them.
    const patterned = applyPatterns(graph, patternsFromSetting(settings.patterns), { backend: tf.getBackend(), training: trace.training }).graph;
    const units = unitGraph(patterned, onnxModuleUnit);
    graph = units.graph;
    if (ipus > 1) {
      const costs = unitCosts(units.graph, units.units, targetSpec(settings.ipuTarget), settings.precision.partialsType === 'half');
      const [split] = stageSplits(costs, ipus, 0);
      strategy = new PipelinedExecutionSpec(...split!.stages.map((stage, i) => new StageSpec(...stage).ipu(split!.ipus[i]!)));
    }
  }
  return compilePlan({ ...trace, graph }, options, undefined, { ...settings, executionStrategy: strategy });
}
