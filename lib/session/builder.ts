/**
 * `Builder`: builds or edits an ONNX model in code, as PopART's builder:
 * inputs and weights, operators (`aiOnnx`, `aiGraphcore`), outputs, and the
 * placement attributes (`virtualGraph`, `pipelineStage`, `executionPhase`),
 * either for the nodes built inside a scope or set on existing nodes.
 *
 * ```ts
 * const builder = new Builder('classifier.onnx');
 * const labels = builder.addInputTensor('INT32', [4]);
 * const probs = builder.aiOnnx.softmax(['output'], { axis: 1 });
 * const loss = builder.aiGraphcore.nllloss([probs, labels]);
 * const session = await TrainingSession.create({ model: builder.getModelProto(), loss, ... });
 * ```
 */
import { PopartException } from '../common/errors.js';
import type { TensorInfo } from '../onnx/graph_evaluation.js';
import { importModel } from '../onnx/model_import.js';
import { OnnxElementType, elementTypeOfDtype, elementTypeName } from '../onnx/proto/onnx_element_type.js';
import { encodeModelProto, type ModelProto, type NodeProto, type ValueInfoProto } from '../onnx/proto/onnx_proto.js';
import { GRAPHCORE_DOMAIN, NEWEST_GRAPHCORE_OPSET } from '../onnx/operators/registry.js';
import { tensorToProto } from '../onnx/proto/tensor_proto_data.js';
import { getLogger } from '../common/log.js';
import { AiGraphcoreOpset } from './ai_graphcore_opset.js';
import { aiOnnxOpset, type AiOnnxOpset, type OnnxAttributes, type TensorId } from './ai_onnx_opset.js';
import { attributeProto, elementTypeCode, hostTensorOf, intAttribute, type TensorValue } from './builder_values.js';
import { copyOfProto, modelFromSource, type ModelSource } from './model_source.js';
import { PLACEMENT_ATTRIBUTES } from './placement_attributes.js';

const log = getLogger('builder');

/** The default-domain opset a new builder writes (PopART's default). */
export const DEFAULT_BUILDER_OPSET = 11;

/** Options of a {@link Builder}. */
export interface BuilderOptions {
  /** The default-domain (`ai.onnx`) opset of a new model (default 11); a loaded model keeps its own. */
  readonly opset?: number;
}

type PlacementAttribute = keyof typeof PLACEMENT_ATTRIBUTES;

function emptyModel(opset: number): ModelProto {
  return {
    ir_version: 8,
    opset_import: [{ domain: '', version: opset }],
    producer_name: 'poptfjs',
    graph: { node: [], name: 'BuilderGraph', initializer: [], sparse_initializer: [], input: [], output: [], value_info: [] },
    metadata_props: [],
    functions: [],
  };
}

function typedValue(name: string, elementType: number, shape: readonly number[] | undefined): ValueInfoProto {
  return {
    name,
    type: { tensor_type: { elem_type: elementType, ...(shape ? { shape: { dim: shape.map((d) => ({ dim_value: d })) } } : {}) } },
  };
}

/** Builds or edits an ONNX model. */
export class Builder {
  /** The ONNX operators, as methods named after them in lower case (see `AiOnnxOpset`). */
  readonly aiOnnx: AiOnnxOpset;
  /** PopART's losses. */
  readonly aiGraphcore: AiGraphcoreOpset;
  private readonly proto: ModelProto;
  private readonly names = new Set<string>();
  private readonly nodeNames = new Set<string>();
  private readonly scopes: Record<PlacementAttribute, number[]> = { virtualGraph: [], pipelineStage: [], executionPhase: [] };

  /**
   * @param model the model to edit (a file path, bytes or a `ModelProto`; it is
   *   copied), or nothing to start an empty model
   * @param options see {@link BuilderOptions}
   */
  constructor(model?: ModelSource, options: BuilderOptions = {}) {
    this.proto = model === undefined ? emptyModel(options.opset ?? DEFAULT_BUILDER_OPSET) : copyOfProto(modelFromSource(model, 'Builder').proto);
    const graph = this.proto.graph!;
    for (const value of [...graph.input, ...graph.output, ...graph.value_info]) this.names.add(value.name ?? '');
    for (const t of graph.initializer) this.names.add(t.name ?? '');
    graph.node.forEach((node) => {
      node.output.forEach((name) => this.names.add(name));
      if (node.name) this.nodeNames.add(node.name);
    });
    const addNode = this.addNode.bind(this);
    this.aiOnnx = aiOnnxOpset((opType, inputs, outputs, attributes, debugName) => addNode(opType, '', inputs, outputs, attributes, debugName));
    this.aiGraphcore = new AiGraphcoreOpset((opType, inputs, outputs, attributes, debugName) => addNode(opType, GRAPHCORE_DOMAIN, inputs, outputs, attributes, debugName));
  }

  private unique(base: string, taken: Set<string>): string {
    let name = base;
    for (let n = 1; taken.has(name); n++) name = `${base}/${n}`;
    taken.add(name);
    return name;
  }

  private checkKnown(ids: readonly TensorId[], where: string): void {
    const unknown = ids.filter((id) => id !== '' && !this.names.has(id));
    if (unknown.length > 0) {
      throw new PopartException(
        `${where}: no tensor(s) ${unknown.map((id) => `'${id}'`).join(', ')} in the model; add them first (addInputTensor, addInitializedInputTensor or an operator)`,
      );
    }
  }

  private addNode(opType: string, domain: string, inputs: readonly TensorId[], outputs: number, attributes: OnnxAttributes, debugName: string | undefined): TensorId[] {
    const where = `${domain === GRAPHCORE_DOMAIN ? 'aiGraphcore' : 'aiOnnx'}.${opType.toLowerCase()}`;
    if (!Array.isArray(inputs) || inputs.some((id) => typeof id !== 'string')) throw new PopartException(`${where}: the inputs must be an array of tensor ids`);
    if (!Number.isInteger(outputs) || outputs < 1) throw new PopartException(`${where}: the number of outputs must be a positive integer, got ${outputs}`);
    if (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes)) {
      throw new PopartException(`${where}: the attributes must be an object such as { axis: 1 }`);
    }
    this.checkKnown(inputs, where);
    const base = debugName ?? opType;
    const name = this.unique(base, this.nodeNames);
    const node: NodeProto = {
      op_type: opType,
      ...(domain ? { domain } : {}),
      name,
      input: [...inputs],
      output: Array.from({ length: outputs }, (_, i) => this.unique(`${base}:${i}`, this.names)),
      attribute: Object.entries(attributes).map(([key, value]) => attributeProto(key, value, `${where} '${name}'`)),
    };
    for (const [method, stack] of Object.entries(this.scopes) as Array<[PlacementAttribute, number[]]>) {
      if (stack.length > 0) node.attribute.push(intAttribute(PLACEMENT_ATTRIBUTES[method], stack[stack.length - 1]!));
    }
    if (domain === GRAPHCORE_DOMAIN && !this.proto.opset_import.some((o) => o.domain === GRAPHCORE_DOMAIN)) {
      this.proto.opset_import.push({ domain: GRAPHCORE_DOMAIN, version: NEWEST_GRAPHCORE_OPSET });
    }
    this.proto.graph!.node.push(node);
    log.trace(() => `added ${domain ? `${domain}.` : ''}${opType} '${name}': (${node.input.join(', ')}) -> (${node.output.join(', ')})`);
    return node.output;
  }

  /** Adds a graph input of element type `dtype` (`'FLOAT'`, `'INT32'`, `'INT64'`, ...) and `shape`; returns its id. */
  addInputTensor(dtype: string, shape: readonly number[], debugName?: string): TensorId {
    const type = elementTypeCode(dtype, 'Builder.addInputTensor: dtype');
    if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0)) {
      throw new PopartException(`Builder.addInputTensor: the shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
    }
    const id = this.unique(debugName ?? 'input', this.names);
    this.proto.graph!.input.push(typedValue(id, type, shape));
    return id;
  }

  /** Adds a weight (an initializer) holding `value`; returns its id. Sessions train the floating-point ones. */
  addInitializedInputTensor(value: TensorValue, debugName?: string): TensorId {
    const host = hostTensorOf(value, 'Builder.addInitializedInputTensor');
    const id = this.unique(debugName ?? 'init', this.names);
    this.proto.graph!.initializer.push(tensorToProto(id, host));
    return id;
  }

  /** Makes `id` an output of the graph. */
  addOutputTensor(id: TensorId): void {
    this.checkKnown([id], 'Builder.addOutputTensor');
    const graph = this.proto.graph!;
    if (graph.output.some((v) => v.name === id)) return;
    graph.output.push({ name: id });
  }

  /** The graph inputs that are not weights. */
  getInputTensorIds(): TensorId[] {
    const weights = new Set(this.proto.graph!.initializer.map((t) => t.name));
    return this.proto.graph!.input.map((v) => v.name ?? '').filter((name) => !weights.has(name));
  }

  /** The graph outputs. */
  getOutputTensorIds(): TensorId[] {
    return this.proto.graph!.output.map((v) => v.name ?? '');
  }

  /** Shapes and dtypes of the model's tensors, by evaluating it on zeros (every input needs a known shape). */
  private tensorInfo(): ReadonlyMap<string, TensorInfo> {
    const imported = importModel({ proto: this.proto }, { outputs: [] });
    imported.dispose();
    return imported.tensorInfo;
  }

  private infoOf(id: TensorId, where: string): TensorInfo {
    this.checkKnown([id], where);
    const info = this.tensorInfo().get(id);
    if (!info) throw new PopartException(`${where}: the shape of '${id}' cannot be inferred`);
    return info;
  }

  /** The shape of tensor `id`. */
  getTensorShape(id: TensorId): number[] {
    return [...this.infoOf(id, 'Builder.getTensorShape').shape];
  }

  /** The ONNX element type name of tensor `id` as poptfjs holds it (`FLOAT`, `INT32`, `BOOL`). */
  getTensorDtypeString(id: TensorId): string {
    return elementTypeName(elementTypeOfDtype(this.infoOf(id, 'Builder.getTensorDtypeString').dtype));
  }

  private placement<T>(method: PlacementAttribute, first: number | TensorId | readonly TensorId[], second: number | (() => T)): T | undefined {
    const where = `Builder.${method}`;
    if (typeof first === 'number' && typeof second === 'function') {
      if (!Number.isInteger(first) || first < 0) throw new PopartException(`${where}: expected a non-negative integer, got ${first}`);
      const stack = this.scopes[method];
      stack.push(first);
      try {
        return second();
      } finally {
        stack.pop();
      }
    }
    if (typeof second !== 'number' || !Number.isInteger(second) || second < 0) {
      throw new PopartException(`${where}: call it as ${method}(value, () => { ... }) for the nodes built inside, or ${method}(tensorIds, value) for existing nodes`);
    }
    const ids = typeof first === 'string' ? [first] : [...(first as readonly TensorId[])];
    const attribute = PLACEMENT_ATTRIBUTES[method];
    for (const id of ids) {
      const node = this.proto.graph!.node.find((n) => n.output.includes(id));
      if (!node) throw new PopartException(`${where}: no node makes '${id}' (graph inputs and weights have no placement)`);
      node.attribute = [...node.attribute.filter((a) => a.name !== attribute), intAttribute(attribute, second)];
    }
  }

  /** Places the nodes built inside `scope` on IPU `ipu` (the virtual graph of `VirtualGraphMode.Manual`). */
  virtualGraph<T>(ipu: number, scope: () => T): T;
  /** Places the nodes that make `nodeOutputNames` on IPU `ipu`. */
  virtualGraph(nodeOutputNames: TensorId | readonly TensorId[], ipu: number): void;
  virtualGraph<T>(first: number | TensorId | readonly TensorId[], second: number | (() => T)): T | undefined {
    return this.placement('virtualGraph', first, second);
  }

  /** Puts the nodes built inside `scope` in pipeline stage `stage`. */
  pipelineStage<T>(stage: number, scope: () => T): T;
  /** Puts the nodes that make `nodeOutputNames` in pipeline stage `stage`. */
  pipelineStage(nodeOutputNames: TensorId | readonly TensorId[], stage: number): void;
  pipelineStage<T>(first: number | TensorId | readonly TensorId[], second: number | (() => T)): T | undefined {
    return this.placement('pipelineStage', first, second);
  }

  /** Puts the nodes built inside `scope` in execution phase `phase` (`VirtualGraphMode.ExecutionPhases`). */
  executionPhase<T>(phase: number, scope: () => T): T;
  /** Puts the nodes that make `nodeOutputNames` in execution phase `phase`. */
  executionPhase(nodeOutputNames: TensorId | readonly TensorId[], phase: number): void;
  executionPhase<T>(first: number | TensorId | readonly TensorId[], second: number | (() => T)): T | undefined {
    return this.placement('executionPhase', first, second);
  }

  /**
   * The model, serialized (PopART's `getModelProto()`); graph outputs added
   * with `addOutputTensor` get their element type and shape.
   */
  getModelProto(): Uint8Array {
    const graph = this.proto.graph!;
    const untyped = graph.output.filter((v) => !v.type);
    if (untyped.length > 0) {
      const info = this.tensorInfo();
      graph.output = graph.output.map((v) => {
        const known = v.type ? undefined : info.get(v.name ?? '');
        return known ? typedValue(v.name!, elementTypeOfDtype(known.dtype) || OnnxElementType.FLOAT, known.shape) : v;
      });
    }
    return encodeModelProto(this.proto);
  }
}
