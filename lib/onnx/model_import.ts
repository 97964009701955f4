/**
 * Importing an ONNX model into the poptfjs IR.
 *
 * The graph is evaluated once with the operator implementations (tfjs ops)
 * while the kernel recorder traces it, on zero tensors of the graph inputs'
 * shapes: initializers become parameters (tf.Variables named after them),
 * graph inputs become IR inputs (named after them), values known at import
 * become constants, and each IR node is annotated (`layer`) with the ONNX
 * node it implements. What the outputs (and the extra outputs asked for) do
 * not depend on is eliminated. The values of FLOAT16 tensors are flagged
 * float16 (see {@link withFloat16Values}).
 *
 * For training, the evaluation runs under tfjs's gradient tape: the graph
 * also computes the gradients of `loss × lossScale` (the loss scale is an
 * extra graph input, after the model's) with respect to the trained
 * initializers, as the model wrappers' training trace does.
 */
import * as tf from '@tensorflow/tfjs';
import { engine } from '../backend/tfjs_internals.js';
import { eliminateDeadCode } from '../ir/dead_code.js';
import type { Graph, GraphOutputs, ValueId } from '../ir/graph.js';
import { KernelRecorder } from '../trace/kernel_recorder.js';
import { valueIdsAfterDeadCodeElimination } from './dead_code_value_ids.js';
import { GraphEvaluation, type GraphEvaluationOptions, type TensorInfo } from './graph_evaluation.js';
import { withFloat16Values } from './float16_values.js';
import { hostTensorFromTf, hostTensorToTf, type HostTensor } from './proto/host_tensor.js';
import type { OnnxModel } from './model_file.js';
import { checkModelSupported } from './model_support.js';
import { isDefaultDomain } from './operators/registry.js';
import { isFloatingElementType, tfjsDtypeOf, elementTypeName } from './proto/onnx_element_type.js';
import { OnnxError } from './proto/onnx_errors.js';
import type { GraphProto, ValueInfoProto } from './proto/onnx_proto.js';
import { tensorFromProto } from './proto/tensor_proto_data.js';
import { declaredTensorMemory } from '../host_memory/declared_tensor_memory.js';
import { isValueless, plannedWithoutValues, valuelessTensor } from './proto/valueless_tensor.js';
import { causedByOutOfMemory } from '../host_memory/host_memory_error.js';
import { formatBytes } from '../ipu/byte_size.js';
import { nameRecord } from '../common/name_record.js';
import { declaredBytes } from '../proto/declared_tensor.js';
import { withBatchedGatherGradient } from '../trace/batched_gather_gradient.js';

/** Names mapped to values: a plain object or a Map. */
export type NamedValues<T> = Readonly<Record<string, T>> | ReadonlyMap<string, T>;

/** Options of {@link importModel}. */
export interface ImportOptions {
  /**
   * Shapes of graph inputs, by name (like PopART's `InputShapeInfo`). Needed
   * for inputs whose declared shape has unknown or symbolic dimensions;
   * overrides the declared shape otherwise.
   */
  inputShapeInfo?: NamedValues<readonly number[]>;
  /**
   * Graph inputs whose values are fixed at import, by name. Nodes that need an
   * input known at import (a Reshape shape, Slice starts, Pad pads, Expand
   * shape, Tile repeats, TopK k, Resize scales, ...) accept such a graph
   * input; it is then a constant of the IR, not an input.
   */
  constantInputs?: NamedValues<tf.Tensor | HostTensor>;
  /**
   * Names of ONNX tensors (intermediate values included) to return after the
   * graph outputs, like PopART anchors.
   */
  extraOutputs?: readonly string[];
  /**
   * Names of ONNX tensors (intermediate values included) the IR returns
   * instead of the graph outputs (`extraOutputs` still follow them), like a
   * PopART session's anchors: graph outputs that are not listed are not
   * computed.
   */
  outputs?: readonly string[];
  /** Import the model for training: see {@link TrainingImport}. */
  training?: TrainingImport;
  /**
   * Import the weights without their values (for `plan()`, on the
   * shape-only backend): initializers stored in external files or with
   * `VALUELESS_MIN_ELEMENTS` elements or more are never read; their
   * variables have shapes and no values. Default false.
   */
  withoutWeights?: boolean;
}

/**
 * What a training import needs: the loss to minimise. The IR then computes,
 * besides its outputs, the loss (`roles.loss`) and the gradients of
 * `sum(loss) × lossScale` (`roles.gradients`) with respect to every
 * floating-point initializer that `trained` accepts and that the loss depends
 * on; the loss scale is an extra graph input after the model's
 * (`roles.lossScale`).
 */
export interface TrainingImport {
  /** The name of the loss tensor (a floating-point tensor, usually a scalar). */
  readonly loss: string;
  /**
   * Whether an initializer is trained. By default every floating-point
   * initializer is, except the running mean and variance a
   * BatchNormalization node reads (inputs 3 and 4).
   */
  readonly trained?: (initializerName: string) => boolean;
}

/** An ONNX model in the poptfjs IR. */
export interface ImportedModel {
  /** The IR: inputs are the graph inputs, outputs the graph outputs then the extra outputs. */
  readonly graph: Graph;
  /** The weights behind the graph's parameters, by parameter name. Owned by this import: see `dispose`. */
  readonly variables: ReadonlyMap<string, tf.Variable>;
  /**
   * The ONNX names of `graph.inputs`, in order: the graph inputs that are
   * neither initializers (an input with an initializer of its name is a
   * weight) nor constant inputs.
   */
  readonly inputNames: readonly string[];
  /** The ONNX names of `graph.roles.outputs`, in order. */
  readonly outputNames: readonly string[];
  /** For a training import: the ONNX name of the loss (`graph.roles.loss`). */
  readonly lossName?: string;
  /**
   * The IR parameter name of each initializer the graph uses: the
   * initializer's name, with `:N` appended when another live tf.Variable
   * already has that name.
   */
  readonly parameterNames: ReadonlyMap<string, string>;
  /** The IR value of every ONNX tensor that is in the graph, by ONNX name. */
  readonly tensorValues: ReadonlyMap<string, ValueId>;
  /** Shape and dtype of every ONNX tensor of the model, by name (as evaluated at import). */
  readonly tensorInfo: ReadonlyMap<string, TensorInfo>;
  /** The model imported. */
  readonly model: OnnxModel;
  /** Disposes the variables. */
  dispose(): void;
}

function entriesOf<T>(values: NamedValues<T> | undefined): Map<string, T> {
  if (!values) return new Map();
  return values instanceof Map ? new Map(values) : new Map(Object.entries(values as Record<string, T>));
}

/** The shape a value info declares: numbers, and the names (or `?<axis>`) of the dimensions it does not fix. */
export function declaredShape(value: ValueInfoProto): Array<number | string> | undefined {
  const shape = value.type?.tensor_type?.shape;
  if (!shape) return undefined;
  return shape.dim.map((d, i) => (d.dim_value !== undefined && d.dim_value >= 0 && d.dim_param === undefined ? d.dim_value : d.dim_param || `?${i}`));
}

interface GraphInputSpec {
  readonly name: string;
  readonly shape: number[];
  readonly dtype: tf.DataType;
  readonly elementType: number;
}

/** The graph inputs the IR takes (not initializers, not constant inputs), with resolved shapes. */
function graphInputSpecs(
  graph: GraphProto,
  initializers: ReadonlyMap<string, HostTensor>,
  constantInputs: ReadonlyMap<string, HostTensor>,
  shapeInfo: Map<string, readonly number[]>,
): GraphInputSpec[] {
  const inputs = graph.input.filter((v) => !initializers.has(v.name ?? '') && !constantInputs.has(v.name ?? ''));
  const known = new Set(graph.input.map((v) => v.name ?? ''));
  const strangers = [...shapeInfo.keys(), ...constantInputs.keys()].filter((name) => !known.has(name) || initializers.has(name));
  if (strangers.length > 0) {
    throw new OnnxError(
      `inputShapeInfo/constantInputs name(s) ${strangers.map((s) => `'${s}'`).join(', ')} that are not graph inputs; ` +
        `the graph inputs are ${inputs.map((v) => `'${v.name}'`).join(', ') || 'none'}`,
    );
  }
  const valueInfo = new Map(graph.value_info.map((v) => [v.name ?? '', v]));
  const problems: string[] = [];
  const specs = inputs.map((value) => {
    const name = value.name ?? '';
    const code = value.type?.tensor_type?.elem_type ?? valueInfo.get(name)?.type?.tensor_type?.elem_type ?? 0;
    const dtype = tfjsDtypeOf(code);
    if (dtype === undefined) throw new OnnxError(`graph input '${name}' has element type ${elementTypeName(code)}, which poptfjs cannot hold`);
    const given = shapeInfo.get(name);
    if (given) return { name, shape: [...given], dtype, elementType: code };
    const declared = declaredShape(value) ?? (valueInfo.has(name) ? declaredShape(valueInfo.get(name)!) : undefined);
    if (!declared || declared.some((d) => typeof d === 'string')) {
      problems.push(`'${name}' [${declared ? declared.join(', ') : 'no shape declared'}]`);
      return { name, shape: [], dtype, elementType: code };
    }
    return { name, shape: declared as number[], dtype, elementType: code };
  });
  if (problems.length > 0) {
    throw new OnnxError(
      `graph input(s) with unknown dimensions: ${problems.join(', ')}; give their shapes in inputShapeInfo, ` +
        `e.g. { inputShapeInfo: { ${JSON.stringify(inputs[0]?.name ?? 'input')}: [1, 3, 224, 224] } }`,
    );
  }
  return specs;
}

/** What the inputs of `specs` are, for messages: `'x' FLOAT[30000, 30000] (3.4 GiB)`. */
function listedInputs(specs: readonly GraphInputSpec[]): string {
  return specs
    .map((spec) => `'${spec.name}' ${elementTypeName(spec.elementType)}[${spec.shape.join(', ')}] (${formatBytes(declaredBytes(spec.shape, spec.dtype))})`)
    .join(', ');
}

function importError(model: OnnxModel, message: string, cause?: unknown): OnnxError {
  return new OnnxError(`${model.path === undefined ? '' : `${model.path}: `}${message}`, {
    ...(model.path === undefined ? {} : { location: model.path }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Refuses graph inputs whose zeros, on which the graph is evaluated at
 * import, would take more than half the memory tensors may take (the values
 * computed from them need room too), before any is allocated; the error
 * names the model's file when it was read from one.
 */
function checkInputMemory(specs: readonly GraphInputSpec[], model: OnnxModel): void {
  const total = specs.reduce((n, spec) => n + declaredBytes(spec.shape, spec.dtype), 0);
  const memory = declaredTensorMemory();
  if (total <= memory.bytes / 2) return;
  throw importError(
    model,
    `graph input(s) ${listedInputs(specs)} take ${formatBytes(total)}: more than half of ${memory.description}; ` +
      "the model is imported by evaluating its graph on zeros of its inputs' shapes, which needs room for the values computed from them too: give smaller shapes in inputShapeInfo",
  );
}

function uniqueVariableName(name: string): string {
  const taken = engine().state.registeredVariables;
  if (!(name in taken)) return name;
  let n = 1;
  while (`${name}:${n}` in taken) n++;
  return `${name}:${n}`;
}

/** What recording the evaluation of the graph gives. */
interface RecordedGraph {
  /** The traced graph, before dead-code elimination. */
  readonly traced: Graph;
  /** The IR value of each ONNX tensor that became a tensor, in `traced`. */
  readonly valueIds: Map<string, ValueId>;
  readonly tensorInfo: Map<string, TensorInfo>;
}

/** What a training evaluation differentiates: the loss, and the variables of the trained initializers. */
interface RecordedTraining {
  readonly loss: string;
  readonly variables: readonly tf.Variable[];
}

/**
 * Evaluates the graph on zero inputs while the kernel recorder traces it,
 * naming each node's kernels after the node; for training, under the
 * gradient tape, with the gradients of the loss recorded too.
 */
function recordEvaluation(
  graph: GraphProto,
  options: Omit<GraphEvaluationOptions, 'inputs' | 'nodeScope'>,
  inputs: readonly GraphInputSpec[],
  inputTensors: readonly tf.Tensor[],
  outputNames: readonly string[],
  training: RecordedTraining | undefined,
): RecordedGraph {
  let tensorInfo = new Map<string, TensorInfo>();
  const valueIds = new Map<string, ValueId>();
  const { recorder, result: roles } = KernelRecorder.record((recorder): GraphOutputs => {
    inputs.forEach((spec, i) => valueIds.set(spec.name, recorder.bindInput(inputTensors[i]!, spec.name)));
    const lossScale = training ? tf.scalar(1) : undefined;
    const lossScaleId = lossScale ? recorder.bindInput(lossScale, 'lossScale') : undefined;
    let outputs: ValueId[] = [];
    let loss: tf.Tensor | undefined;
    const evaluate = () => {
      const evaluation = new GraphEvaluation(graph, {
        ...options,
        inputs: new Map(inputs.map((spec, i) => [spec.name, { tensor: inputTensors[i]!, elementType: spec.elementType }])),
        nodeScope: (label, fn) => recorder.inLayer(label, fn),
      });
      evaluation.run();
      outputs = outputNames.map((name) => recorder.valueFor(evaluation.tensor(name)));
      tensorInfo = evaluation.tensorInfo();
      for (const name of tensorInfo.keys()) {
        if (!valueIds.has(name) && evaluation.isTensor(name)) valueIds.set(name, recorder.valueFor(evaluation.tensor(name)));
      }
      if (training) loss = evaluation.tensor(training.loss);
    };
    if (!training) {
      tf.tidy(evaluate);
      return { outputs };
    }
    try {
      const forward = () => {
        evaluate();
        if (!loss!.dtype.startsWith('float')) throw new OnnxError(`the loss '${training.loss}' is ${loss!.dtype}; a loss must be floating-point`);
        const scaled = recorder.inLoss(() => tf.sum(tf.mul(loss!, lossScale!)));
        recorder.beginBackward();
        return scaled;
      };
      const gradients = nameRecord<ValueId>();
      const { value, grads } = withBatchedGatherGradient(() => engine().gradients(forward, [...training.variables], undefined, true));
      grads.forEach((g, i) => {
        if (g) gradients[training.variables[i]!.name] = recorder.valueFor(g);
      });
      tf.dispose([value, ...grads.filter((g): g is tf.Tensor => g !== undefined)]);
      return { outputs, loss: recorder.valueFor(loss!), gradients, lossScale: lossScaleId! };
    } finally {
      lossScale!.dispose();
    }
  });
  return { traced: recorder.builder.build(roles), valueIds, tensorInfo };
}

/** The initializers a BatchNormalization node reads as running statistics (inputs 3 and 4), which are not trained. */
function runningStatistics(graph: GraphProto): Set<string> {
  const names = new Set<string>();
  for (const node of graph.node) {
    if (node.op_type === 'BatchNormalization' && isDefaultDomain(node.domain)) node.input.slice(3, 5).forEach((name) => names.add(name));
  }
  return names;
}

/** The graph without what its outputs do not depend on, and the ids the named values have in it. */
function withoutDeadCode(traced: Graph, valueIds: ReadonlyMap<string, ValueId>): { graph: Graph; tensorValues: Map<string, ValueId> } {
  const renumbering = valueIdsAfterDeadCodeElimination(traced);
  const graph = eliminateDeadCode(traced);
  if (renumbering.size !== graph.values.length) {
    throw new Error('internal error: the ONNX importer lost track of values through dead-code elimination');
  }
  const tensorValues = new Map<string, ValueId>();
  for (const [name, id] of valueIds) {
    const kept = renumbering.get(id);
    if (kept !== undefined) tensorValues.set(name, kept);
  }
  return { graph, tensorValues };
}

/** Imports an ONNX model into the poptfjs IR. See {@link ImportOptions}. */
export function importModel(model: OnnxModel, options: ImportOptions = {}): ImportedModel {
  const opset = checkModelSupported(model.proto);
  const graph = model.proto.graph!;
  const initializers = new Map(graph.initializer.map((t) => [t.name ?? '', options.withoutWeights && plannedWithoutValues(t) ? valuelessTensor(t) : tensorFromProto(t)]));
  const constantInputs = new Map([...entriesOf(options.constantInputs)].map(([name, v]) => [name, v instanceof tf.Tensor ? hostTensorFromTf(v) : v]));
  const inputs = graphInputSpecs(graph, initializers, constantInputs, entriesOf(options.inputShapeInfo));
  checkInputMemory(inputs, model);
  const outputNames = [...(options.outputs ?? graph.output.map((v) => v.name ?? '')), ...(options.extraOutputs ?? [])];
  const names = new Set([...graph.input.map((v) => v.name), ...initializers.keys(), ...graph.node.flatMap((n) => n.output)]);
  const unknown = [...outputNames, ...(options.training ? [options.training.loss] : [])].filter((n) => !names.has(n));
  if (unknown.length > 0) throw new OnnxError(`no tensor(s) named ${unknown.map((n) => `'${n}'`).join(', ')} in the model`);

  const parameterNames = new Map<string, string>();
  const created = new Map<string, tf.Variable>();
  const statistics = runningStatistics(graph);
  const trainable = (name: string, value: HostTensor) => {
    if (!options.training || !isFloatingElementType(value.elementType)) return false;
    return options.training.trained ? options.training.trained(name) : !statistics.has(name);
  };
  const createVariable = (name: string, value: HostTensor) => {
    const paramName = uniqueVariableName(name);
    // A weight planned without values: a fill of its shape, which the shape-only backend holds without values.
    const initial = isValueless(value) ? tf.fill([...value.shape], 0, tfjsDtypeOf(value.elementType) ?? 'float32') : hostTensorToTf(value, `initializer '${name}'`);
    const variable = tf.variable(initial, options.training ? trainable(name, value) : isFloatingElementType(value.elementType), paramName);
    initial.dispose();
    created.set(name, variable);
    parameterNames.set(name, paramName);
    return variable;
  };
  const variableFor = (name: string, value: HostTensor) => created.get(name) ?? createVariable(name, value);

  const inputTensors: tf.Tensor[] = [];
  try {
    for (const spec of inputs) inputTensors.push(tf.zeros(spec.shape, spec.dtype));
    // The gradient tape needs the trained variables before the evaluation uses them.
    const training = options.training && {
      loss: options.training.loss,
      variables: [...initializers].filter(([name, value]) => trainable(name, value)).map(([name, value]) => createVariable(name, value)),
    };
    const recorded = recordEvaluation(graph, { opset, initializers, constantInputs, variableFor }, inputs, inputTensors, outputNames, training);
    const { graph: untyped, tensorValues } = withoutDeadCode(recorded.traced, recorded.valueIds);
    const ir = withFloat16Values(untyped, tensorValues, recorded.tensorInfo);
    const live = new Set(ir.values.flatMap((v) => (v.source.kind === 'param' ? [v.source.name] : [])));
    const variables = new Map<string, tf.Variable>();
    for (const v of created.values()) {
      if (live.has(v.name)) variables.set(v.name, v);
      else v.dispose();
    }
    for (const [name, paramName] of parameterNames) if (!live.has(paramName)) parameterNames.delete(name);
    return {
      graph: ir,
      variables,
      inputNames: inputs.map((spec) => spec.name),
      outputNames,
      ...(options.training ? { lossName: options.training.loss } : {}),
      parameterNames,
      tensorValues,
      tensorInfo: recorded.tensorInfo,
      model,
      dispose: () => variables.forEach((v) => v.dispose()),
    };
  } catch (error) {
    created.forEach((v) => v.dispose());
    if (!causedByOutOfMemory(error)) throw error;
    throw importError(
      model,
      `the host ran out of memory importing the model (${error instanceof Error ? error.message.split('\n')[0] : String(error)}): ` +
        `it is imported by evaluating its graph on zeros of its inputs' shapes, ${listedInputs(inputs)}; give smaller shapes in inputShapeInfo`,
      error,
    );
  } finally {
    tf.dispose(inputTensors);
  }
}
