/**
 * Records every kernel call that reaches the tfjs engine into an IR graph.
 *
 * While recording, the engine's `runKernel`, `clone`, `addTapeNode` and
 * `makeTensor` are hooked, as are `Variable.assign`, `Tensor.dataSync/data`
 * and `Math.random`. Tensors are mapped to IR values by tensor id: bound
 * inputs become graph inputs, `tf.Variable`s become parameters, random
 * tensors become random pseudo-kernels, and any other tensor met for the first
 * time becomes a constant. Nested kernel calls (a kernel implemented with
 * other kernels) are part of the outer call and are not recorded.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { engine, hookEngine, type EngineInternals, type KernelInputs, type TapeNode } from '../backend/tfjs_internals.js';
import { GraphBuilder } from '../ir/graph_builder.js';
import { FILL_KERNEL } from '../backend/kernel_catalogue/kernel_catalogue.js';
import type { AttrValue, ConstantData, Graph, NodeAnnotations, NodeId, Pass, ValueId } from '../ir/graph.js';
import type { OverlappingMode } from '../ir/host_overlap.js';
import { eliminateDeadCode } from '../ir/dead_code.js';
import { SHAPE_ONLY_BACKEND } from '../backend/shape_only/backend_registration.js';
import { isFloat16Tensor } from '../backend/float16_tensor_marks.js';
import { enterModelTrace } from '../backend/model_trace_state.js';
import { repeatedValue, SHAPE_ONLY_MAX_KEPT_ELEMENTS, type ShapeOnlyBackend } from '../backend/shape_only/shape_only_backend.js';
import { ShapeOnlyError } from '../backend/shape_only/rules/shape_only_error.js';
import { currentBlockTrace } from './block_scope.js';
import { currentNameScope } from './name_scope.js';
import { currentOpAttributes } from './op_attributes.js';
import { userSourceLocation } from './source_location.js';
import { backwardMultiConv } from './multi_conv_scope.js';
import { windowLargerThanInput } from './window_fit.js';
import { describeRandomTensor, isRandomOpScope, type RandomSpec } from './random_distribution.js';

/** An error in a model that cannot be traced. */
export class TraceError extends PoptfjsError {
  constructor(message: string, location = '', cause?: unknown) {
    super(message, { type: 'trace', location, cause });
  }
}

function toAttrValue(x: unknown): AttrValue | undefined {
  if (x === undefined || typeof x === 'function') return undefined;
  if (x === null || typeof x === 'boolean' || typeof x === 'number' || typeof x === 'string') return x;
  if (ArrayBuffer.isView(x)) return Array.from(x as unknown as ArrayLike<number>);
  if (Array.isArray(x)) return x.map((e) => toAttrValue(e) ?? null);
  if (x instanceof tf.Tensor) {
    throw new TraceError('a kernel received a tensor as an attribute, which cannot be compiled');
  }
  const out: Record<string, AttrValue> = {};
  for (const [k, v] of Object.entries(x as object)) {
    const a = toAttrValue(v);
    if (a !== undefined) out[k] = a;
  }
  return out;
}

interface PendingAlias {
  clone: number;
  original: tf.Tensor;
}

/** How a trace records. */
export interface RecordOptions {
  /** Called after each kernel the model calls (a check of the memory its tensors take). */
  readonly afterKernel?: () => void;
  /** True when the trace is of a training step (forward and backward passes). */
  readonly training?: boolean;
}

/**
 * A graph being recorded: the model's, or the body of a control-flow op
 * (`ops.forLoop`, `ops.cond`) traced inside another graph. Tensors map to the
 * values of the graph they were met in.
 */
interface TraceFrame {
  readonly builder: GraphBuilder;
  readonly valueOf: Map<number, ValueId>;
  /** The values that depend on the graph's inputs, parameters or random draws. */
  readonly dynamic: Set<ValueId>;
  /** For a body: what it is, and the graph it is traced in. */
  readonly body?: BodyFrame;
}

/** What a body's frame knows of its place. */
interface BodyFrame {
  /** The body as errors name it, e.g. `the body of ops.forLoop`. */
  readonly what: string;
  /** When the device runs it, as errors say it, e.g. `10 times`. */
  readonly runs: string;
  readonly outer: TraceFrame;
  /** For each value of the enclosing graph the body reads, the body input standing for it. */
  readonly captured: Map<ValueId, ValueId>;
}

/** A body traced by {@link KernelRecorder.traceBody}. */
export interface TracedBody {
  /** The body's graph: its inputs (the explicit ones, then the captured ones) and its outputs. */
  readonly graph: Graph;
  /** For each input of the body's graph, the value of the enclosing graph it takes. */
  readonly inputs: readonly ValueId[];
  /** The tensors the body returned when it was traced (their values are those of one run of the body). */
  readonly outputs: readonly tf.Tensor[];
}

/** A host overlap mark as set in the trace: on a value, resolved to a model input or output when the trace ends. */
export interface PendingHostOverlap {
  readonly of: 'input' | 'output';
  readonly value: ValueId;
  readonly mode: OverlappingMode;
}

/** The dtypes a captured fill is recorded as a `Fill` node of. */
const FILL_DTYPES: ReadonlySet<tf.DataType> = new Set(['float32', 'int32', 'bool']);

let activeRecorder: KernelRecorder | undefined;

/** The recorder of the trace in progress, if any. */
export function currentRecorder(): KernelRecorder | undefined {
  return activeRecorder;
}

/** Records kernel calls into a {@link GraphBuilder}. Use {@link KernelRecorder.record}. */
export class KernelRecorder {
  /** The tf.Variables met, by name. */
  readonly variables = new Map<string, tf.Variable>();

  /** The graph being recorded into: the model's, or a body's while one is traced. */
  private frame: TraceFrame = { builder: new GraphBuilder(), valueOf: new Map(), dynamic: new Set() };
  /** Tensors made inside a body that was traced, by tensor id, with the body's name: they cannot be used outside it. */
  private readonly bodyTensors = new Map<number, string>();
  private readonly randomTensors = new Map<number, RandomSpec>();
  private readonly pendingAliases: PendingAlias[] = [];
  private readonly assignedOriginals = new Map<tf.Variable, tf.Tensor>();
  private readonly layerStack: string[] = [];
  private pass: Pass = 'forward';
  private computingLoss = false;
  private gradOf: ValueId | undefined;
  private nestedKernelDepth = 0;
  private internal = 0;
  private lastMathRandom: { value: number; scopeId: number | undefined } | undefined;

  /** True when tracing on the shape-only backend: captured tensors may have no values. */
  private readonly shapeOnly: boolean;

  private readonly afterKernel: (() => void) | undefined;

  /** True when the trace is of a training step. */
  readonly training: boolean;

  private constructor(
    private readonly eng: EngineInternals,
    options: RecordOptions,
  ) {
    this.shapeOnly = eng.backendName === SHAPE_ONLY_BACKEND;
    this.afterKernel = options.afterKernel;
    this.training = options.training ?? false;
  }

  /** The graph being built (a body's while one is traced). */
  get builder(): GraphBuilder {
    return this.frame.builder;
  }

  private get valueOf(): Map<number, ValueId> {
    return this.frame.valueOf;
  }

  private get dynamic(): Set<ValueId> {
    return this.frame.dynamic;
  }

  /**
   * Runs `fn` with recording on, and restores the engine afterwards (also on
   * error). Variables assigned by `fn` get their old values back.
   */
  static record<T>(fn: (recorder: KernelRecorder) => T, options: RecordOptions = {}): { recorder: KernelRecorder; result: T } {
    const recorder = new KernelRecorder(engine(), options);
    const restore = recorder.install();
    const enclosing = activeRecorder;
    activeRecorder = recorder;
    try {
      const result = fn(recorder);
      return { recorder, result };
    } finally {
      activeRecorder = enclosing;
      restore();
      recorder.restoreAssignedVariables();
    }
  }

  /** The host overlap marks set so far (`ops.setOverlapForInput` / `setOverlapForOutput`), in the order they were set. */
  readonly hostOverlapMarks: PendingHostOverlap[] = [];

  /** True while a body (of `ops.forLoop`, `ops.cond`) is being traced. */
  get tracingBody(): boolean {
    return this.frame.body !== undefined;
  }

  /** True if a node recorded so far reads `value`. */
  isRead(value: ValueId): boolean {
    for (let id = 0; id < this.builder.nodeCount; id++) if (this.builder.node(id).inputs.includes(value)) return true;
    return false;
  }

  /** Marks the node that made `tensor` as a recomputation checkpoint (its outputs are kept, not recomputed). */
  markCheckpoint(tensor: tf.Tensor): void {
    const source = this.builder.value(this.valueFor(tensor)).source;
    if (source.kind === 'node') this.builder.annotateNode(source.node, { checkpoint: true });
  }

  /** Binds `tensor` to a new graph input. */
  bindInput(tensor: tf.Tensor, name: string): ValueId {
    const id = this.builder.addInput(name, tensor.shape, tensor.dtype);
    this.valueOf.set(tensor.id, id);
    this.dynamic.add(id);
    return id;
  }

  /**
   * The IR value of `tensor`, capturing it as a parameter, random draw or
   * constant when first met. Inside a body, a tensor of the enclosing graph
   * becomes an input of the body (parameters and constants are met in the
   * model's graph and handed to the body too); a random draw made in the body
   * is drawn by the body.
   */
  valueFor(tensor: tf.Tensor): ValueId {
    const known = this.valueOf.get(tensor.id) ?? this.resolveAlias(tensor.id);
    if (known !== undefined) return known;
    const body = this.frame.body;
    if (body && !this.randomTensors.has(tensor.id)) return this.captureFromOuter(tensor, body);
    const madeIn = this.bodyTensors.get(tensor.id);
    if (madeIn !== undefined) {
      throw new TraceError(
        `a tensor computed inside ${madeIn} is used outside it: a body is traced once into a subgraph whose values exist only while it runs; ` +
          "return the tensor from the body and use the op's output instead",
      );
    }
    let id: ValueId;
    if (tensor instanceof tf.Variable) {
      id = this.builder.addParam(tensor.name, tensor.shape, tensor.dtype, tensor.trainable);
      this.variables.set(tensor.name, tensor);
      this.dynamic.add(id);
    } else {
      const random = this.randomTensors.get(tensor.id);
      if (random) {
        [id] = this.builder.addNode(random.kernel, [], [], random.attrs, [{ shape: tensor.shape, dtype: tensor.dtype }], this.annotations()) as [ValueId];
        this.dynamic.add(id);
      } else {
        id = this.captureConstant(tensor);
      }
    }
    this.valueOf.set(tensor.id, id);
    return id;
  }

  /** The body input standing for `tensor` of the enclosing graph (made when first read). */
  private captureFromOuter(tensor: tf.Tensor, body: BodyFrame): ValueId {
    const inner = this.frame;
    this.frame = body.outer;
    let outerId: ValueId;
    try {
      outerId = this.valueFor(tensor);
    } finally {
      this.frame = inner;
    }
    let id = body.captured.get(outerId);
    if (id === undefined) {
      const v = body.outer.builder.value(outerId);
      id = inner.builder.addInput(`captured${body.captured.size}`, v.shape, v.dtype);
      body.captured.set(outerId, id);
      if (body.outer.dynamic.has(outerId)) inner.dynamic.add(id);
    }
    inner.valueOf.set(tensor.id, id);
    return id;
  }

  /** A new tensor holding the values of `t`, made without recording (so no value of the graph stands for it yet). */
  private unrecordedCopy(t: tf.Tensor): tf.Tensor {
    this.internal++;
    try {
      return this.eng.runKernel('Identity', { x: t }, {}) as tf.Tensor;
    } finally {
      this.internal--;
    }
  }

  /**
   * Traces `fn` once as the body of a control-flow op: into a graph of its
   * own whose inputs are `inputs` (passed by value: the body gets copies)
   * followed by the values of the enclosing graph it reads. `what` and
   * `runs` name the body and when the device runs it in errors (reading a
   * value, writing a weight). Tensors made inside the body cannot be used
   * after it.
   */
  traceBody(what: string, runs: string, inputs: readonly tf.Tensor[], fn: (inputs: tf.Tensor[]) => readonly tf.Tensor[]): TracedBody {
    const explicit = inputs.map((t) => this.valueFor(t));
    const outer = this.frame;
    const body: BodyFrame = { what, runs, outer, captured: new Map() };
    const frame: TraceFrame = { builder: new GraphBuilder(), valueOf: new Map(), dynamic: new Set(), body };
    const bodyInputs = inputs.map((t, i) => {
      const copy = this.unrecordedCopy(t);
      const id = frame.builder.addInput(`input${i}`, t.shape, t.dtype);
      frame.valueOf.set(copy.id, id);
      frame.dynamic.add(id);
      return copy;
    });
    this.frame = frame;
    let outputs: readonly tf.Tensor[];
    let outputIds: ValueId[];
    try {
      outputs = fn(bodyInputs);
      outputIds = outputs.map((t) => this.valueFor(t));
    } finally {
      this.frame = outer;
      for (const tensorId of frame.valueOf.keys()) if (!outer.valueOf.has(tensorId)) this.bodyTensors.set(tensorId, what);
    }
    return {
      graph: eliminateDeadCode(frame.builder.build({ outputs: outputIds })),
      inputs: [...explicit, ...body.captured.keys()],
      outputs,
    };
  }

  /**
   * Adds a control-flow node (`ops.forLoop`, `ops.cond`) holding `bodies`,
   * and returns tensors standing for its outputs, made from `standIns` (the
   * values of a body run once when it was traced): they are not the values
   * the device computes, so reading them during the trace is an error.
   */
  addControlFlowNode(kernel: string, inputs: readonly ValueId[], attrs: Record<string, AttrValue>, bodies: readonly Graph[], standIns: readonly tf.Tensor[]): tf.Tensor[] {
    const builder = this.builder;
    const outIds = builder.addNode(
      kernel,
      null,
      inputs,
      attrs,
      standIns.map((t) => ({ shape: t.shape, dtype: t.dtype })),
      this.annotations(),
    );
    builder.setBodies(builder.nodeCount - 1, bodies);
    return standIns.map((t, i) => {
      const out = this.unrecordedCopy(t);
      this.valueOf.set(out.id, outIds[i]!);
      this.dynamic.add(outIds[i]!);
      return out;
    });
  }

  /** Runs `fn` with node annotations naming `layer`. */
  inLayer<T>(layer: string, fn: () => T): T {
    this.layerStack.push(layer);
    try {
      return fn();
    } finally {
      this.layerStack.pop();
    }
  }

  /** Runs `fn` (the loss computed after the model) with nodes marked as loss nodes. */
  inLoss<T>(fn: () => T): T {
    this.computingLoss = true;
    try {
      return fn();
    } finally {
      this.computingLoss = false;
    }
  }

  /** From now on, nodes belong to the backward pass. */
  beginBackward(): void {
    this.pass = 'backward';
    this.gradOf = undefined;
  }

  /** True if `tensor` is a random draw of the model (recorded as a random node when the graph first uses it). */
  isRandomDraw(tensor: tf.Tensor): boolean {
    return this.randomTensors.has(tensor.id);
  }

  /** True if `tensor` depends on the graph's inputs, parameters or random draws (or, in a body, on the body's inputs). */
  isDynamic(tensor: tf.Tensor): boolean {
    const id = this.valueOf.get(tensor.id) ?? this.resolveAlias(tensor.id);
    if (id !== undefined) return this.dynamic.has(id);
    for (let frame = this.frame.body?.outer; frame; frame = frame.body?.outer) {
      const outerId = frame.valueOf.get(tensor.id);
      if (outerId !== undefined) return frame.dynamic.has(outerId);
    }
    return false;
  }

  /**
   * The annotations of the next node. A backward node carries the block (and
   * IPU) of the forward node it differentiates, so it stays on that node's
   * IPU whatever patterns later do to the forward node; a backward
   * convolution of a convolution of an `ops.MultiConv` group joins the group.
   */
  private annotations(kernel?: string): NodeAnnotations {
    const layer = this.layerStack[this.layerStack.length - 1];
    const active = this.pass === 'forward' && !this.computingLoss ? currentBlockTrace()?.active : undefined;
    const block = active ? { block: active.userId, ipu: active.ipuId } : this.gradOf !== undefined ? this.builder.node(this.gradOf).annotations : {};
    const scope = this.pass === 'forward' ? currentNameScope() : this.gradOf !== undefined ? this.builder.node(this.gradOf).annotations.scope : undefined;
    const attributes = this.pass === 'forward' ? currentOpAttributes() : this.gradOf !== undefined ? this.builder.node(this.gradOf).annotations.attributes : undefined;
    // A model traced with shapes only is a built layers model, whose kernels tfjs's layers make: no user line to find.
    const source =
      this.pass === 'forward'
        ? this.shapeOnly
          ? undefined
          : userSourceLocation()
        : this.gradOf !== undefined
          ? this.builder.node(this.gradOf).annotations.source
          : undefined;
    return {
      pass: this.pass,
      ...(layer !== undefined ? { layer } : {}),
      ...(this.gradOf !== undefined ? { gradOf: this.gradOf } : {}),
      ...(block.block !== undefined ? { block: block.block, ...(block.ipu !== undefined ? { ipu: block.ipu } : {}) } : {}),
      ...(this.computingLoss ? { loss: true } : {}),
      ...(scope !== undefined ? { scope } : {}),
      ...(attributes !== undefined ? { attributes } : {}),
      ...(source !== undefined ? { source } : {}),
      ...(this.pass === 'backward' && kernel !== undefined && this.gradOf !== undefined ? backwardMultiConv(kernel, this.builder.node(this.gradOf).annotations) : {}),
    };
  }

  /** The values of a random draw to recognise its distribution by; none when planning with shapes only, where draws are not computed. */
  private randomValues(t: tf.Tensor): Float32Array | undefined {
    return this.shapeOnly ? undefined : (t.dataSync() as Float32Array);
  }

  /**
   * A captured tensor as a value of the graph: a `Fill` node when it is large
   * and holds one value repeated (the ones and zeros tfjs's gradient functions
   * make, as large as activations: the graph keeps their one value and a run
   * makes them when they are read, instead of holding them for good), else a
   * constant with its values (none when tracing with shapes only and the
   * backend has none).
   */
  private captureConstant(tensor: tf.Tensor): ValueId {
    const fillable = tensor.size > SHAPE_ONLY_MAX_KEPT_ELEMENTS && FILL_DTYPES.has(tensor.dtype);
    const written = fillable && this.shapeOnly ? (this.eng.backend as unknown as ShapeOnlyBackend).writtenFill(tensor.dataId) : undefined;
    const data = written === undefined ? this.readInternal(tensor) : null;
    const fill = written ?? (fillable && data !== null ? repeatedValue(data as tf.TypedArray) : undefined);
    if (fill === undefined) return this.builder.addConstant(data, tensor.shape, tensor.dtype, isFloat16Tensor(tensor) ? 'float16' : undefined);
    const output = { shape: tensor.shape, dtype: tensor.dtype, ...(isFloat16Tensor(tensor) ? { precision: 'float16' as const } : {}) };
    return this.builder.addNode(FILL_KERNEL, [], [], { shape: [...tensor.shape], value: fill, dtype: tensor.dtype }, [output], this.annotations())[0]!;
  }

  /** The values of a captured tensor; null when tracing with shapes only and the backend has none. */
  private readInternal(tensor: tf.Tensor): ConstantData | null {
    this.internal++;
    try {
      const data = tensor.dataSync() as unknown;
      if (Array.isArray(data)) return data.slice() as string[];
      return (data as Float32Array | Int32Array | Uint8Array).slice();
    } catch (error) {
      if (this.shapeOnly && error instanceof ShapeOnlyError) return null;
      throw error;
    } finally {
      this.internal--;
    }
  }

  private resolveAlias(tensorId: number): ValueId | undefined {
    const i = this.pendingAliases.findIndex((a) => a.clone === tensorId);
    if (i < 0) return undefined;
    const [alias] = this.pendingAliases.splice(i, 1);
    const id = this.valueFor(alias!.original);
    this.valueOf.set(tensorId, id);
    return id;
  }

  private flushAliases(): void {
    for (let i = this.pendingAliases.length - 1; i >= 0; i--) {
      const { clone, original } = this.pendingAliases[i]!;
      const id = this.valueOf.get(original.id);
      if (id !== undefined) {
        this.valueOf.set(clone, id);
        this.pendingAliases.splice(i, 1);
      }
    }
  }

  /** The node of this trace that made `tensor`, if a node did. */
  producerNode(tensor: tf.Tensor): NodeId | undefined {
    const id = this.valueOf.get(tensor.id);
    if (id === undefined) return undefined;
    const source = this.builder.value(id).source;
    return source.kind === 'node' ? source.node : undefined;
  }

  /** Refuses, naming the layer, a convolution or pooling whose window does not fit in its input (window_fit.ts), before it runs. */
  checkWindowFits(kernel: string, inputs: KernelInputs, attrs: Record<string, unknown> | undefined): void {
    if (Array.isArray(inputs)) return;
    const unfit = windowLargerThanInput(kernel, inputs.x?.shape, inputs.filter?.shape, attrs ?? {});
    if (unfit === undefined) return;
    const layer = this.layerStack[this.layerStack.length - 1];
    throw new TraceError(layer !== undefined ? `layer '${layer}': ${unfit}` : unfit);
  }

  private recordKernel(kernel: string, inputs: KernelInputs, attrs: Record<string, unknown> | undefined, out: tf.Tensor | tf.Tensor[]): void {
    const names: string[] | null = Array.isArray(inputs) ? null : [];
    const ids: ValueId[] = [];
    if (Array.isArray(inputs)) {
      for (const t of inputs) ids.push(this.valueFor(t));
    } else {
      for (const [name, t] of Object.entries(inputs)) {
        if (t == null) continue;
        names!.push(name);
        ids.push(this.valueFor(t));
      }
    }
    const outputs = Array.isArray(out) ? out : [out];
    const attrValue = (toAttrValue(attrs ?? {}) ?? {}) as Record<string, AttrValue>;
    const outIds = this.builder.addNode(
      kernel,
      names,
      ids,
      attrValue,
      outputs.map((t) => ({ shape: t.shape, dtype: t.dtype })),
      this.annotations(kernel),
    );
    const isDynamic = ids.some((id) => this.dynamic.has(id));
    outputs.forEach((t, i) => {
      this.valueOf.set(t.id, outIds[i]!);
      if (isDynamic) this.dynamic.add(outIds[i]!);
    });
    this.flushAliases();
  }

  /** What value `id` of `frame` is, as read errors name it, and the layer that made it (if known). */
  private describeValue(frame: TraceFrame, id: ValueId): { what: string; layer?: string } {
    const source = frame.builder.value(id).source;
    if (source.kind === 'input') {
      const body = frame.body;
      if (!body) return { what: `model input '${source.name}'` };
      for (const [outerId, innerId] of body.captured) if (innerId === id) return this.describeValue(body.outer, outerId);
      return { what: `input ${source.index} of ${body.what}` };
    }
    if (source.kind === 'param') return { what: `weight '${source.name}'` };
    if (source.kind === 'node') {
      const node = frame.builder.node(source.node);
      return { what: `the output of kernel ${node.kernel}`, ...(node.annotations.layer !== undefined ? { layer: node.annotations.layer } : {}) };
    }
    return { what: 'a tensor computed from the model inputs or weights' };
  }

  private describeReadError(tensor: tf.Tensor): TraceError {
    let described: { what: string; layer?: string } = { what: 'a tensor computed from the model inputs or weights' };
    for (let frame: TraceFrame | undefined = this.frame; frame; frame = frame.body?.outer) {
      const id = frame.valueOf.get(tensor.id);
      if (id === undefined) continue;
      described = this.describeValue(frame, id);
      break;
    }
    const where = described.layer ?? this.layerStack[this.layerStack.length - 1] ?? '';
    const read = `reads the values of ${described.what}${where ? ` in layer '${where}'` : ''} while it is being traced. `;
    const instead =
      'compute with tensor ops instead (tf.where, tf.maximum, ...); to see a value, use x = ops.ipuPrintTensor(x, title), which prints it each time the model runs';
    const body = this.frame.body;
    if (body) {
      return new TraceError(
        `${body.what} ${read}The body is traced once into a subgraph that the device runs ${body.runs}, ` +
          `so values cannot be read inside it and control flow cannot depend on them: ${instead}`,
        where,
      );
    }
    return new TraceError(
      `the model ${read}poptfjs compiles the model into a static graph, so values cannot be read inside it and control flow cannot depend on them: ${instead}`,
      where,
    );
  }

  /** Installs the recorder's hooks on the engine, tensors, variables and `Math.random`; returns the function removing them. */
  private install(): () => void {
    const unhook = [
      enterModelTrace(),
      this.hookRunKernel(),
      this.hookClone(),
      this.hookTapeNodes(),
      this.hookMakeTensor(),
      this.hookMathRandom(),
      this.hookAssign(),
      this.hookReads(),
    ];
    return () => {
      for (const undo of unhook.reverse()) undo();
    };
  }

  /** Records each kernel the model runs (not those kernels run, nor those the recorder runs itself). */
  private hookRunKernel(): () => void {
    const eng = this.eng;
    const recorder = this;
    return hookEngine(
      'runKernel',
      (runKernel) =>
        function (kernelName, inputs, attrs) {
          if (recorder.nestedKernelDepth > 0 || recorder.internal > 0) return runKernel.call(eng, kernelName, inputs, attrs);
          recorder.checkWindowFits(kernelName, inputs, attrs);
          recorder.nestedKernelDepth++;
          let out: tf.Tensor | tf.Tensor[];
          try {
            out = runKernel.call(eng, kernelName, inputs, attrs);
          } finally {
            recorder.nestedKernelDepth--;
          }
          recorder.recordKernel(kernelName, inputs, attrs, out);
          recorder.afterKernel?.();
          return out;
        },
    );
  }

  /** A clone is the value it clones (or, when that is not yet known, an alias resolved when it is). */
  private hookClone(): () => void {
    const eng = this.eng;
    const recorder = this;
    return hookEngine(
      'clone',
      (clone) =>
        function (x) {
          const y = clone.call(eng, x);
          const id = recorder.valueOf.get(x.id);
          if (id !== undefined) recorder.valueOf.set(y.id, id);
          else recorder.pendingAliases.push({ clone: y.id, original: x });
          return y;
        },
    );
  }

  /** The kernels a gradient function runs are recorded in the backward pass, as the gradient of the forward node. */
  private hookTapeNodes(): () => void {
    const eng = this.eng;
    const recorder = this;
    return hookEngine(
      'addTapeNode',
      (addTapeNode) =>
        function (kernelName, inputs, outputs, gradientsFunc, saved, attrs) {
          addTapeNode.call(eng, kernelName, inputs, outputs, gradientsFunc, saved, attrs);
          const tape = eng.state.activeTape;
          const node: TapeNode | undefined = tape?.[tape.length - 1];
          const gradient = node?.gradient;
          if (!node || !gradient) return;
          // The forward node is known once the kernel is recorded, after its tape node is added.
          const forward = () => (outputs[0] ? recorder.producerNode(outputs[0]) : undefined);
          node.gradient = (dys) => {
            const thunks = recorder.inBackwardOf(forward(), () => gradient(dys));
            const wrapped: Record<string, () => tf.Tensor> = {};
            for (const [name, thunk] of Object.entries(thunks)) wrapped[name] = () => recorder.inBackwardOf(forward(), thunk);
            return wrapped;
          };
        },
    );
  }

  /** Runs `fn` recording in the backward pass, as the gradient of node `forward` (when known). */
  private inBackwardOf<T>(forward: NodeId | undefined, fn: () => T): T {
    const saved = { pass: this.pass, gradOf: this.gradOf };
    this.pass = 'backward';
    if (forward !== undefined) this.gradOf = forward;
    try {
      return fn();
    } finally {
      this.pass = saved.pass;
      this.gradOf = saved.gradOf;
    }
  }

  /** A tensor a random op makes from the last `Math.random()` of its scope is a random draw, redrawn on each run. */
  private hookMakeTensor(): () => void {
    const eng = this.eng;
    const recorder = this;
    return hookEngine(
      'makeTensor',
      (makeTensor) =>
        function (values, shape, dtype, backend) {
          const t = makeTensor.call(eng, values, shape, dtype, backend);
          const scope = eng.state.activeScope;
          if (recorder.internal === 0 && scope && isRandomOpScope(scope.name)) {
            const seed = recorder.lastMathRandom;
            if (seed && seed.scopeId === scope.id) {
              recorder.internal++;
              try {
                recorder.randomTensors.set(t.id, describeRandomTensor(scope.name, seed.value, t, recorder.randomValues(t)));
              } finally {
                recorder.internal--;
              }
            }
          }
          return t;
        },
    );
  }

  /** Remembers the last `Math.random()` and the scope it was drawn in (a random op's seed). */
  private hookMathRandom(): () => void {
    const random = Math.random;
    const recorder = this;
    Math.random = function () {
      const value = random();
      recorder.lastMathRandom = { value, scopeId: recorder.eng.state.activeScope?.id };
      return value;
    };
    return () => {
      Math.random = random;
    };
  }

  /** Records each weight assignment (refused inside a body); with shapes only, records it without making it. */
  private hookAssign(): () => void {
    const assign = tf.Variable.prototype.assign;
    const recorder = this;
    tf.Variable.prototype.assign = function (this: tf.Variable, newValue: tf.Tensor) {
      recorder.recordAssignment(this, newValue, assign);
    };
    return () => {
      tf.Variable.prototype.assign = assign;
    };
  }

  private recordAssignment(variable: tf.Variable, newValue: tf.Tensor, assign: tf.Variable['assign']): void {
    const body = this.frame.body;
    if (body && this.internal === 0) {
      throw new TraceError(
        `${body.what} assigns weight '${variable.name}': a body runs on the device as a subgraph that cannot write the model's weights; ` +
          'return the new value from the body instead',
        variable.name,
      );
    }
    if (this.shapeOnly && this.internal === 0) {
      // With shapes only, the assignment is recorded but not made: the variable keeps its values (and its backend).
      this.valueFor(variable);
      const assigned = this.valueFor(newValue);
      this.builder.addAssignment(variable.name, assigned);
      this.valueOf.set(variable.id, assigned);
      return;
    }
    if (this.internal === 0 && !this.assignedOriginals.has(variable)) {
      this.internal++;
      try {
        this.assignedOriginals.set(variable, tf.keep(tf.clone(variable)));
      } finally {
        this.internal--;
      }
    }
    if (this.internal === 0) this.valueFor(variable);
    assign.call(variable, newValue);
    if (this.internal > 0) return;
    const value = this.valueFor(newValue);
    this.builder.addAssignment(variable.name, value);
    this.valueOf.set(variable.id, value);
  }

  /** Reading the values of a tensor that depends on the model's inputs or weights is an error: the graph is static. */
  private hookReads(): () => void {
    const { dataSync, data } = tf.Tensor.prototype;
    const checkRead = (tensor: tf.Tensor) => {
      if (this.internal === 0 && this.isDynamic(tensor)) throw this.describeReadError(tensor);
    };
    tf.Tensor.prototype.dataSync = function (this: tf.Tensor) {
      checkRead(this);
      return dataSync.call(this);
    } as typeof tf.Tensor.prototype.dataSync;
    tf.Tensor.prototype.data = function (this: tf.Tensor) {
      checkRead(this);
      return data.call(this);
    } as typeof tf.Tensor.prototype.data;
    return () => {
      tf.Tensor.prototype.dataSync = dataSync;
      tf.Tensor.prototype.data = data;
    };
  }

  private restoreAssignedVariables(): void {
    this.internal++;
    try {
      for (const [variable, original] of this.assignedOriginals) {
        variable.assign(original);
        original.dispose();
      }
    } finally {
      this.internal--;
    }
  }
}
