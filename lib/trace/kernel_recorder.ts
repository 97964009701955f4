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
import { PoptfjsError } from '../errors.js';
import { engine, type EngineInternals, type KernelInputs, type TapeNode } from '../backend/tfjs_internals.js';
import { GraphBuilder } from '../ir/graph_builder.js';
import { FILL_KERNEL, type AttrValue, type ConstantData, type NodeAnnotations, type NodeId, type Pass, type ValueId } from '../ir/graph.js';
import { SHAPE_ONLY_BACKEND } from '../backend/shape_only/backend_registration.js';
import { repeatedValue, SHAPE_ONLY_MAX_KEPT_ELEMENTS, type ShapeOnlyBackend } from '../backend/shape_only/shape_only_backend.js';
import { ShapeOnlyError } from '../backend/shape_only/shape_only_error.js';
import { currentBlockTrace } from './block_scope.js';
import { currentNameScope } from './name_scope.js';
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
  /** The graph being built. */
  readonly builder = new GraphBuilder();
  /** The tf.Variables met, by name. */
  readonly variables = new Map<string, tf.Variable>();

  private readonly valueOf = new Map<number, ValueId>();
  private readonly dynamic = new Set<ValueId>();
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

  private constructor(
    private readonly eng: EngineInternals,
    options: RecordOptions,
  ) {
    this.shapeOnly = eng.backendName === SHAPE_ONLY_BACKEND;
    this.afterKernel = options.afterKernel;
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

  /** The IR value of `tensor`, capturing it as a parameter, random draw or constant when first met. */
  valueFor(tensor: tf.Tensor): ValueId {
    const known = this.valueOf.get(tensor.id) ?? this.resolveAlias(tensor.id);
    if (known !== undefined) return known;
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

  /** True if `tensor` depends on the graph's inputs, parameters or random draws. */
  isDynamic(tensor: tf.Tensor): boolean {
    const id = this.valueOf.get(tensor.id) ?? this.resolveAlias(tensor.id);
    return id !== undefined && this.dynamic.has(id);
  }

  /**
   * The annotations of the next node. A backward node carries the block (and
   * IPU) of the forward node it differentiates, so it stays on that node's
   * IPU whatever patterns later do to the forward node.
   */
  private annotations(): NodeAnnotations {
    const layer = this.layerStack[this.layerStack.length - 1];
    const active = this.pass === 'forward' && !this.computingLoss ? currentBlockTrace()?.active : undefined;
    const block = active ? { block: active.userId, ipu: active.ipuId } : this.gradOf !== undefined ? this.builder.node(this.gradOf).annotations : {};
    const scope = this.pass === 'forward' ? currentNameScope() : this.gradOf !== undefined ? this.builder.node(this.gradOf).annotations.scope : undefined;
    return {
      pass: this.pass,
      ...(layer !== undefined ? { layer } : {}),
      ...(this.gradOf !== undefined ? { gradOf: this.gradOf } : {}),
      ...(block.block !== undefined ? { block: block.block, ...(block.ipu !== undefined ? { ipu: block.ipu } : {}) } : {}),
      ...(this.computingLoss ? { loss: true } : {}),
      ...(scope !== undefined ? { scope } : {}),
    };
  }

  /**
   * The values of a random draw to recognise its distribution by: all of
   * them, or with shapes only the first ones the backend kept (all of a small
   * draw); undefined if it kept none.
   */
  private randomValues(t: tf.Tensor): Float32Array | undefined {
    if (!this.shapeOnly) return t.dataSync() as Float32Array;
    const backend = this.eng.backend as unknown as ShapeOnlyBackend;
    const prefix = backend.writtenPrefix(t.dataId);
    if (prefix) return prefix as Float32Array;
    try {
      return t.dataSync() as Float32Array;
    } catch (error) {
      if (error instanceof ShapeOnlyError) return undefined;
      throw error;
    }
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
    if (fill === undefined) return this.builder.addConstant(data, tensor.shape, tensor.dtype);
    const output = { shape: tensor.shape, dtype: tensor.dtype };
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

  private producerNode(tensor: tf.Tensor): NodeId | undefined {
    const id = this.valueOf.get(tensor.id);
    if (id === undefined) return undefined;
    const source = this.builder.value(id).source;
    return source.kind === 'node' ? source.node : undefined;
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
      this.annotations(),
    );
    const isDynamic = ids.some((id) => this.dynamic.has(id));
    outputs.forEach((t, i) => {
      this.valueOf.set(t.id, outIds[i]!);
      if (isDynamic) this.dynamic.add(outIds[i]!);
    });
    this.flushAliases();
  }

  private describeReadError(tensor: tf.Tensor): TraceError {
    const id = this.valueOf.get(tensor.id);
    let what = 'a tensor computed from the model inputs or weights';
    let where = this.layerStack[this.layerStack.length - 1] ?? '';
    if (id !== undefined) {
      const source = this.builder.value(id).source;
      if (source.kind === 'input') what = `model input '${source.name}'`;
      else if (source.kind === 'param') what = `weight '${source.name}'`;
      else if (source.kind === 'node') {
        const node = this.builder.node(source.node);
        what = `the output of kernel ${node.kernel}`;
        where = node.annotations.layer ?? where;
      }
    }
    return new TraceError(
      `the model reads the values of ${what}${where ? ` in layer '${where}'` : ''} while it is being traced. ` +
        'poptfjs compiles the model into a static graph, so values cannot be read inside it and control flow cannot depend on them: ' +
        'compute with tensor ops instead (tf.where, tf.maximum, ...); to see a value, use x = ops.ipuPrintTensor(x, title), which prints it each time the model runs',
      where,
    );
  }

  private install(): () => void {
    const eng = this.eng;
    const recorder = this;
    const orig = {
      runKernel: eng.runKernel,
      clone: eng.clone,
      addTapeNode: eng.addTapeNode,
      makeTensor: eng.makeTensor,
      assign: tf.Variable.prototype.assign,
      dataSync: tf.Tensor.prototype.dataSync,
      data: tf.Tensor.prototype.data,
      random: Math.random,
    };

    eng.runKernel = function (kernelName, inputs, attrs) {
      if (recorder.nestedKernelDepth > 0 || recorder.internal > 0) return orig.runKernel.call(eng, kernelName, inputs, attrs);
      recorder.nestedKernelDepth++;
      let out: tf.Tensor | tf.Tensor[];
      try {
        out = orig.runKernel.call(eng, kernelName, inputs, attrs);
      } finally {
        recorder.nestedKernelDepth--;
      }
      recorder.recordKernel(kernelName, inputs, attrs, out);
      recorder.afterKernel?.();
      return out;
    };

    eng.clone = function (x) {
      const y = orig.clone.call(eng, x);
      const id = recorder.valueOf.get(x.id);
      if (id !== undefined) recorder.valueOf.set(y.id, id);
      else recorder.pendingAliases.push({ clone: y.id, original: x });
      return y;
    };

    eng.addTapeNode = function (kernelName, inputs, outputs, gradientsFunc, saved, attrs) {
      orig.addTapeNode.call(eng, kernelName, inputs, outputs, gradientsFunc, saved, attrs);
      const tape = eng.state.activeTape;
      const node: TapeNode | undefined = tape?.[tape.length - 1];
      const gradient = node?.gradient;
      if (!node || !gradient) return;
      const inBackwardOf = <T>(fn: () => T): T => {
        const saved = { pass: recorder.pass, gradOf: recorder.gradOf };
        recorder.pass = 'backward';
        const forward = outputs[0] ? recorder.producerNode(outputs[0]) : undefined;
        if (forward !== undefined) recorder.gradOf = forward;
        try {
          return fn();
        } finally {
          recorder.pass = saved.pass;
          recorder.gradOf = saved.gradOf;
        }
      };
      node.gradient = (dys) => {
        const thunks = inBackwardOf(() => gradient(dys));
        const wrapped: Record<string, () => tf.Tensor> = {};
        for (const [name, thunk] of Object.entries(thunks)) wrapped[name] = () => inBackwardOf(thunk);
        return wrapped;
      };
    };

    eng.makeTensor = function (values, shape, dtype, backend) {
      const t = orig.makeTensor.call(eng, values, shape, dtype, backend);
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
    };

    Math.random = function () {
      const value = orig.random();
      recorder.lastMathRandom = { value, scopeId: eng.state.activeScope?.id };
      return value;
    };

    tf.Variable.prototype.assign = function (this: tf.Variable, newValue: tf.Tensor) {
      if (recorder.shapeOnly && recorder.internal === 0) {
        // With shapes only, the assignment is recorded but not made: the variable keeps its values (and its backend).
        recorder.valueFor(this);
        const assigned = recorder.valueFor(newValue);
        recorder.builder.addAssignment(this.name, assigned);
        recorder.valueOf.set(this.id, assigned);
        return;
      }
      if (recorder.internal === 0 && !recorder.assignedOriginals.has(this)) {
        recorder.internal++;
        try {
          recorder.assignedOriginals.set(this, tf.keep(tf.clone(this)));
        } finally {
          recorder.internal--;
        }
      }
      if (recorder.internal === 0) recorder.valueFor(this);
      orig.assign.call(this, newValue);
      if (recorder.internal > 0) return;
      const value = recorder.valueFor(newValue);
      recorder.builder.addAssignment(this.name, value);
      recorder.valueOf.set(this.id, value);
    };

    const checkRead = (tensor: tf.Tensor) => {
      if (recorder.internal === 0 && recorder.isDynamic(tensor)) throw recorder.describeReadError(tensor);
    };
    tf.Tensor.prototype.dataSync = function (this: tf.Tensor) {
      checkRead(this);
      return orig.dataSync.call(this);
    } as typeof tf.Tensor.prototype.dataSync;
    tf.Tensor.prototype.data = function (this: tf.Tensor) {
      checkRead(this);
      return orig.data.call(this);
    } as typeof tf.Tensor.prototype.data;

    return () => {
      eng.runKernel = orig.runKernel;
      eng.clone = orig.clone;
      eng.addTapeNode = orig.addTapeNode;
      eng.makeTensor = orig.makeTensor;
      delete (eng as Partial<EngineInternals>).runKernel;
      delete (eng as Partial<EngineInternals>).clone;
      delete (eng as Partial<EngineInternals>).addTapeNode;
      delete (eng as Partial<EngineInternals>).makeTensor;
      Math.random = orig.random;
      tf.Variable.prototype.assign = orig.assign;
      tf.Tensor.prototype.dataSync = orig.dataSync;
      tf.Tensor.prototype.data = orig.data;
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
