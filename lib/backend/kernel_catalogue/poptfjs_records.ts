/**
 * poptfjs's own kernels (`poptfjs.*`): PopTorch's helper ops that are nodes
 * of their own kind in the graph, the passes the patterns fuse, the control
 * flow and random draws the tracer makes. Each record names its host
 * implementation (../poptfjs_kernels), its shape rule, its cost and its FLOPs;
 * adding an op adds its record here.
 */
import { output, type KernelShapeRule } from '../shape_only/rules/kernel_shape_rule.js';
import { unplannableRule } from '../shape_only/rules/value_dependent_rule.js';
import { CPU_OP_KERNEL } from '../poptfjs_kernels/cpu_op_kernels.js';
import { CTC_BEAM_SEARCH_DECODER_KERNEL, type CtcBeamSearchAttrs } from '../poptfjs_kernels/ctc_beam_search_kernel.js';
import { CUSTOM_OP_GRADIENT_KERNEL, CUSTOM_OP_KERNEL, type CustomOpNodeAttrs } from '../poptfjs_kernels/custom_op_kernels.js';
import { DYNAMIC_SLICE_KERNEL, DYNAMIC_UPDATE_KERNEL } from '../poptfjs_kernels/dynamic_slice_kernels.js';
import { FLOAT16_CAST_KERNEL, IPU_PRINT_TENSOR_KERNEL, NOP_KERNEL } from '../poptfjs_kernels/identity_kernels.js';
import { NEAREST_KERNEL } from '../poptfjs_kernels/nearest_kernel.js';
import { ADD_RELU_KERNEL, RELU_GRAD_KERNEL } from '../poptfjs_kernels/relu_kernels.js';
import { SERIALIZED_MATMUL_KERNEL } from '../poptfjs_kernels/serialized_matmul_kernel.js';
import { chainedCost, inputBytes, localCopyCost, outputBytes, unlistedCost } from './cost_rules.js';
import { flopsPerOutput, matMulFlops, noFlops } from './flop_rules.js';
import type { CostRule, KernelNode, KernelRecord } from './kernel_record.js';
import { cyclesIn, DEFAULT_CYCLES_PER_ELEMENT, POPLIBS_CYCLES } from './poplibs_cycles.js';

/** The input `x`'s shape and dtype. */
const likeInput: KernelShapeRule = (call) => output(call.input('x').shape, call.input('x').dtype);

/** A copy of the input on each tile (PopART's Nop and PrintTensor output a copy); a print also sends the tensor to the host. */
function copyCost(print: boolean): CostRule {
  return (node, model) => {
    const bytes = outputBytes(node);
    return model.parts({
      compute: model.vertexCycles + model.copyCycles(Math.ceil(bytes / model.tiles)),
      exchange: print ? model.hostCycles(bytes) : 0,
      supersteps: 1,
    });
  };
}

/**
 * popops' dynamic slice and update: the offset is sent to the tiles (a superstep), then the slice's elements move
 * between the tiles that hold them in the tensor and in the slice (another); an update writes into a copy of the tensor.
 */
function dynamicSliceCost(update: boolean): CostRule {
  return (node, model) => {
    const bytes = outputBytes(node);
    const perTile = Math.ceil((update ? node.input('src', 1).bytes : bytes) / model.tiles);
    const copy = update ? model.copyCycles(Math.ceil(bytes / model.tiles)) : 0;
    return model.parts({ compute: 2 * model.vertexCycles + model.copyCycles(perTile) + copy, exchange: model.exchangeCycles(perTile), supersteps: 2 });
  };
}

/**
 * Each time step extends every beam of every batch entry by every class (an element-wise pass over the candidates)
 * and keeps the best beamWidth of each entry (a reduction); the candidates and the beams' histories are temporary.
 */
const ctcBeamSearchCost: CostRule = (node, model) => {
  const [steps, batch, classes] = node.inputs[0]!.shape as [number, number, number];
  const beams = batch * (node.attrs.beamWidth as number);
  const candidates = beams * classes;
  const extend = model.parts({ compute: model.vertexCycles + Math.ceil(candidates / model.tiles) * DEFAULT_CYCLES_PER_ELEMENT[1], supersteps: 1 });
  return model.repeat(model.sequence(extend, model.reduction(candidates, beams, 'float32')), steps, candidates * 2 * 4 + beams * steps * 4);
};

/**
 * A loop runs its body `count` times, each iteration ending with a copy of the loop-carried values into the next
 * iteration's inputs (PopART's `LoopOp` copies the body's outputs to its inputs); it holds what its body holds.
 */
const loopCost: CostRule = (node, model) => {
  const carried = outputBytes(node);
  const copy = model.parts({ compute: model.vertexCycles + model.copyCycles(Math.ceil(carried / model.tiles)), supersteps: 1 });
  return model.repeat(model.sequence(model.bodyCosts()[0]!, copy), node.attrs.count as number, model.bodyWorkingBytes());
};

/**
 * A conditional's branch is picked on the device, so which one runs is unknown when compiling: the longer one (by
 * cycles) is taken to run, after a sync to read the condition; it holds what its larger branch holds.
 */
const condCost: CostRule = (_node, model) =>
  model.repeat(model.sequence(model.longest(model.bodyCosts()), model.parts({ compute: 0, supersteps: 1 })), 1, model.bodyWorkingBytes());

/** The pairs of points `ops.nearest` measures, and the coordinates of each (a batch entry adds one, PopTorch's batch feature). */
function nearestPairs(node: KernelNode): { pairs: number; coordinates: number } {
  const x = node.input('x', 0);
  const y = node.input('y', 1);
  return { pairs: x.shape[0]! * y.shape[0]!, coordinates: (x.shape[1] ?? 1) + (node.hasInput('batchX') ? 1 : 0) };
}

/**
 * As PopTorch lowers `nearest` (poptorch/source/popart_canonicalization/pyg_torch_cluster/NearestOp.cpp, `vq`: a
 * cdist and an ArgMin; the cdist of DistanceOps.cpp: a Sub broadcast to [N, M, D] and a norm over D, PopART's
 * ReduceL2): the N·M·D differences in one element-wise pass, their squares summed to N·M (a reduction) and the square
 * root of each sum, then each row's least of the M distances (a reduction to N). The differences and the distances
 * are temporary.
 */
const nearestCost: CostRule = (node, model) => {
  const { pairs, coordinates } = nearestPairs(node);
  const n = node.outputs[0]!.elements;
  const differences = pairs * coordinates;
  const roots = model.parts({ compute: model.vertexCycles + Math.ceil(pairs / model.tiles) * cyclesIn(POPLIBS_CYCLES.Sqrt, model.float16), supersteps: 1 });
  const cost = model.sequence(model.elementwise(POPLIBS_CYCLES.Sub, differences), model.reduction(differences, pairs), roots, model.reduction(pairs, n));
  return model.repeat(cost, 1, (differences + pairs) * (model.float16 ? 2 : 4));
};

/** A draw: each tile writes its share of the values from its own generator. */
const randomDraw: Omit<KernelRecord, 'name'> = { category: 'random', cost: localCopyCost(false), flops: noFlops, precision: 'weak' };

/** poptfjs's own kernels, by the name the code knows them by. */
const RECORDS = {
  /** `ops.ipuPrintTensor`: hands its input on and prints it each time it runs on the device. */
  ipuPrintTensor: { host: IPU_PRINT_TENSOR_KERNEL, category: 'host', shape: likeInput, cost: copyCost(true), flops: noFlops },
  /** `ops.nop`: hands its input on as a copy that no pattern removes. */
  nop: { host: NOP_KERNEL, category: 'move', shape: likeInput, cost: copyCost(false), flops: noFlops },
  /** `half(x)` of a value a model computes: `x` as float16 (float32 holding float16 values, which the device rounds). */
  float16Cast: { host: FLOAT16_CAST_KERNEL, category: 'element-wise', shape: likeInput, cost: localCopyCost(true), flops: noFlops, precision: 'float16' },
  /** `ops.customOp`: its outputs are the shapes and dtypes of the call's example outputs; its work is the user's kernel's. */
  customOp: {
    host: CUSTOM_OP_KERNEL,
    category: 'element-wise',
    shape: (call) => {
      const { outputShapes, outputDtypes } = call.attrsAs<CustomOpNodeAttrs>();
      return outputShapes.map((shape, i) => output(shape, outputDtypes[i]!));
    },
    cost: unlistedCost,
    flops: noFlops,
    costNote:
      "taken to be element-wise: one pass over its output elements at the cycles of an operation poplibs' tables do not list, its smaller inputs broadcast; its FLOPs are not counted",
  },
  /** The backward node of `ops.customOp`: the gradients of the op's inputs (the list's middle part, between the output gradients and the outputs). */
  customOpGradient: {
    host: CUSTOM_OP_GRADIENT_KERNEL,
    category: 'element-wise',
    shape: (call) => {
      const list = call.inputList();
      const outputs = call.attrsAs<CustomOpNodeAttrs>().outputShapes.length;
      return list.slice(outputs, list.length - outputs).map((x) => output(x.shape, x.dtype));
    },
    cost: unlistedCost,
    flops: noFlops,
    costNote: 'taken to be element-wise, as the custom op is',
  },
  /** `ops.CPU`: computes nothing on the device; its inputs go to the host and its outputs come back over the host link. */
  cpuOp: {
    host: CPU_OP_KERNEL,
    category: 'host',
    shape: unplannableRule("its outputs are what the CPU op's host function returns for the values of its inputs"),
    cost: (node, model) => model.parts({ compute: 0, supersteps: 0, host: { toHost: model.hostCycles(inputBytes(node)), fromHost: model.hostCycles(outputBytes(node)) } }),
    flops: noFlops,
    costNote: "the host's time running its function is not modelled",
  },
  /** `ops.ctcBeamSearchDecoder`: the paths' log-probabilities (float32 [N, topPaths]), lengths (int32 [N, topPaths]) and labels (int32 [N, topPaths, T]). */
  ctcBeamSearchDecoder: {
    host: CTC_BEAM_SEARCH_DECODER_KERNEL,
    category: 'reduction',
    shape: (call) => {
      const [steps, batch] = call.input('probs').shape as [number, number];
      const { topPaths } = call.attrsAs<CtcBeamSearchAttrs>();
      return [output([batch, topPaths], 'float32'), output([batch, topPaths], 'int32'), output([batch, topPaths, steps], 'int32')];
    },
    cost: ctcBeamSearchCost,
    flops: noFlops,
  },
  /** `ops.dynamicSlice`: the input's shape with `ceil(size / step)` elements along `dim`. */
  dynamicSlice: {
    host: DYNAMIC_SLICE_KERNEL,
    category: 'gather/scatter',
    shape: (call) => {
      const { dim, size, step } = call.attrs as unknown as { dim: number; size: number; step: number };
      const x = call.input('x');
      return output(
        x.shape.map((n, d) => (d === dim ? Math.ceil(size / step) : n)),
        x.dtype,
      );
    },
    cost: dynamicSliceCost(false),
    flops: noFlops,
  },
  /** `ops.dynamicUpdate`: the shape and dtype of the tensor updated. */
  dynamicUpdate: { host: DYNAMIC_UPDATE_KERNEL, category: 'gather/scatter', shape: likeInput, cost: dynamicSliceCost(true), flops: noFlops },
  /** `ops.serializedMatMul`: `[g, m, n]` from `[g, m, k]` and `[g, k, n]`, planned as `factor` products one after another. */
  serializedMatMul: {
    host: SERIALIZED_MATMUL_KERNEL,
    category: 'product',
    product: 'matrices',
    shape: (call) => {
      const [g, m] = call.input('a').shape;
      return output([g!, m!, call.input('b').shape[2]!], call.input('a').dtype);
    },
    cost: (node, model) => model.product({ serialization: node.attrs }),
    flops: matMulFlops,
  },
  /** `ops.nearest`: the index of each point of `x`'s nearest point of `y`, int32 [N]; three FLOPs a coordinate of each pair (a subtract, a multiply, an add). */
  nearest: {
    host: NEAREST_KERNEL,
    category: 'reduction',
    shape: (call) => output([call.input('x').shape[0]!], 'int32'),
    cost: nearestCost,
    flops: (node) => {
      const { pairs, coordinates } = nearestPairs(node);
      return 3 * pairs * coordinates;
    },
    costNote: "with batch entries, PopTorch's rescale of the points into [0, 1] before it appends each point's entry (passes over the N + M points) is not counted",
  },
  /** A bias `Add` and its `Relu` in one pass: the sum and its relu, each of `a`'s shape; an add and a max per element. */
  addRelu: {
    host: ADD_RELU_KERNEL,
    category: 'element-wise',
    shape: (call) => [output(call.input('a').shape, 'float32'), output(call.input('a').shape, 'float32')],
    cost: chainedCost(POPLIBS_CYCLES.Add, POPLIBS_CYCLES.Relu, true),
    flops: flopsPerOutput(1),
  },
  /** A `Relu`'s gradient in one pass: `dy`'s shape; a step and a multiply per element. */
  reluGrad: {
    host: RELU_GRAD_KERNEL,
    category: 'element-wise',
    shape: (call) => output(call.input('dy').shape, 'float32'),
    cost: chainedCost(POPLIBS_CYCLES.Step, POPLIBS_CYCLES.Multiply, false),
    flops: flopsPerOutput(2),
  },
  /**
   * `ops.forLoop`: runs its body `attrs.count` times. Inputs: the loop-carried values (one per output), then the
   * values of the enclosing graph the body reads; the body takes the same inputs and returns the next carried values.
   */
  forLoop: { name: 'poptfjs.ForLoop', category: 'control', cost: loopCost, flops: (node) => (node.attrs.count as number) * node.bodyFlops()[0]! },
  /**
   * `ops.cond`: runs its then body (`bodies[0]`) when its one-element boolean condition is true, else its else body
   * (`bodies[1]`). Inputs: the condition, then the then body's inputs, then the else body's; both bodies return outputs
   * of the same shapes and dtypes. Its FLOPs are its larger branch's.
   */
  cond: { name: 'poptfjs.Cond', category: 'control', cost: condCost, flops: (node) => Math.max(0, ...node.bodyFlops()) },
  /** A uniform draw the tracer recognised (`tf.randomUniform`), drawn afresh on each run. */
  randomUniform: { name: 'poptfjs.RandomUniform', ...randomDraw },
  /** A normal draw the tracer recognised (`tf.randomNormal`, `tf.randomStandardNormal`). */
  randomNormal: { name: 'poptfjs.RandomNormal', ...randomDraw },
  /** A truncated normal draw the tracer recognised (`tf.truncatedNormal`). */
  truncatedNormal: { name: 'poptfjs.TruncatedNormal', ...randomDraw },
} as const satisfies Record<string, Omit<KernelRecord, 'name'> & { readonly name?: string }>;

type RecordKey = keyof typeof RECORDS;

/** The name of a record: its host kernel's, or the one it gives itself. */
function nameOf(key: RecordKey): string {
  const record: { readonly name?: string; readonly host?: { readonly kernelName: string } } = RECORDS[key];
  return record.host?.kernelName ?? record.name!;
}

/** The records of poptfjs's kernels. */
export const POPTFJS_RECORDS: readonly KernelRecord[] = (Object.keys(RECORDS) as RecordKey[]).map((key) => ({ ...RECORDS[key], name: nameOf(key) }) as KernelRecord);

/** The kernel names of poptfjs's own kernels, by the name the code knows them by (`POPTFJS_KERNELS.nop` is `poptfjs.Nop`). */
export const POPTFJS_KERNELS = Object.fromEntries((Object.keys(RECORDS) as RecordKey[]).map((key) => [key, nameOf(key)])) as { readonly [K in RecordKey]: string };

/** The random draws the tracer makes, drawn from the run's generator on each run. */
export const RANDOM_KERNELS = {
  randomUniform: POPTFJS_KERNELS.randomUniform,
  randomNormal: POPTFJS_KERNELS.randomNormal,
  truncatedNormal: POPTFJS_KERNELS.truncatedNormal,
} as const;
