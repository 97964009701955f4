/**
 * The cost rules kernels share, written in the cost model's primitives
 * (`KernelCostModel`): element-wise passes, reductions, products,
 * copies and moves, gathers and scatters. Poplar runs a kernel as
 * bulk-synchronous supersteps over the tiles (an exchange, a compute phase, a
 * sync); a kernel lasts as long as its busiest tile.
 */
import { chained, cyclesIn, DEFAULT_CYCLES_PER_ELEMENT, POPLIBS_CYCLES } from './poplibs_cycles.js';
import type { CostRule, CyclesPerElement, KernelNode } from './kernel_record.js';

/** Costs nothing (a view: Poplar looks at the same storage another way). */
export const noCost: CostRule = (_node, model) => model.free;

/** One element-wise pass over the outputs at `cycles` per element. */
export function elementwiseCost(cycles: CyclesPerElement): CostRule {
  return (_node, model) => model.elementwise(cycles);
}

/** Element-wise passes over the outputs one after another (as popnn runs normalizations: one pass per operation). */
export function passesCost(...passes: readonly CyclesPerElement[]): CostRule {
  return (_node, model) => model.sequence(...passes.map((cycles) => model.elementwise(cycles)));
}

/**
 * An operation poplibs' tables do not list and poptfjs has no estimate of
 * its own for: one element-wise pass over its outputs at a few instructions an
 * element.
 */
export const unlistedCost: CostRule = elementwiseCost(DEFAULT_CYCLES_PER_ELEMENT);

/** The explanation every record with {@link unlistedCost} gives. */
export const UNLISTED_COST_NOTE = "taken as one element-wise pass over its outputs at the cycles of an operation poplibs' tables do not list";

/** A reduction of the first input to the first output: each tile adds its elements, the partial sums are exchanged and added again. */
export const reductionCost: CostRule = (node, model) => model.reduction(node.inputs[0]!.elements, Math.max(1, node.outputs[0]!.elements));

/** A matrix product or convolution as the planner plans it; a fused one adds its bias and activation on the output in one pass. */
export function productCost(fused: boolean): CostRule {
  return (_node, model) => model.product(fused ? { epilogue: DEFAULT_CYCLES_PER_ELEMENT } : {});
}

/**
 * Softmax (`log` false) or log-softmax as popnn computes them
 * (lib/popnn/NonLinearity.cpp softmaxImpl, LogSoftmax.cpp logSoftmaxImpl):
 * the row maxima, x - max and its exp on every element, the row sums in
 * float32; then, once a row, 1 / sum cast back to half (softmax: "we compute
 * 1/x first as there are a lot fewer elements", in place then cast, two
 * passes) or log(sum) with the same cast (one pass); and one more pass over
 * the elements: a multiply by the row's 1 / sum, or a subtract of its log(sum).
 */
export function softmaxCost(log: boolean): CostRule {
  return (node, model) => {
    const output = node.outputs[0]!;
    const elements = outputElements(node);
    const rows = Math.max(1, elements / (output.shape[output.shape.length - 1] ?? 1));
    const overRows = (cycles: CyclesPerElement) => model.parts({ compute: model.vertexCycles + Math.ceil(rows / model.tiles) * cyclesIn(cycles, false), supersteps: 1 });
    const cast = model.float16 ? [POPLIBS_CYCLES.Cast] : [];
    const perRow = log ? [overRows(chained(POPLIBS_CYCLES.Log, ...cast))] : [POPLIBS_CYCLES.Reciprocal, ...cast].map(overRows);
    return model.sequence(
      model.reduction(elements, rows),
      model.elementwise(POPLIBS_CYCLES.Sub),
      model.elementwise(POPLIBS_CYCLES.Exp),
      model.reduction(elements, rows),
      ...perRow,
      model.elementwise(log ? POPLIBS_CYCLES.Sub : POPLIBS_CYCLES.Multiply),
    );
  };
}

/** A division, or a multiplication by the reciprocal when the divisor is one number. */
export const divisionCost: CostRule = (node, model) => model.elementwise(node.inputs[1]!.elements === 1 ? POPLIBS_CYCLES.Multiply : POPLIBS_CYCLES.RealDiv);

/** Pooling: every output (or, for a gradient, input) element visits its window, one vector operation per window element. */
export function poolingCost(gradient: boolean): CostRule {
  return (node, model) => {
    const window = poolingWindow(node);
    return model.elementwise([0.25 * window, 0.5 * window], gradient ? inputElements(node) : outputElements(node));
  };
}

/** Elements of a pooling window (`attrs.filterSize`, a number for a square window). */
export function poolingWindow(node: KernelNode): number {
  const size = (node.attrs.filterSize as number[] | number | undefined) ?? 1;
  return Array.isArray(size) ? size.reduce((a, b) => a * b, 1) : size * size;
}

/**
 * A gather (`scatter` false) or scatter: rows are fetched from (or sent to) the
 * tiles that hold them, a superstep to send the indices and one to move the
 * rows; a scatter also adds what lands on the same row.
 */
export function gatherScatterCost(scatter: boolean): CostRule {
  return (node, model) => {
    const perTile = Math.ceil((scatter ? inputBytes(node) : outputBytes(node)) / model.tiles);
    const additions = scatter ? Math.ceil(outputElements(node) / model.tiles) * cyclesIn(POPLIBS_CYCLES.Add, model.float16) : 0;
    return model.parts({
      compute: 2 * model.vertexCycles + model.copyCycles(perTile) + additions,
      exchange: model.exchangeCycles(perTile),
      supersteps: 2,
    });
  };
}

/** Data written to new places: each tile copies its share of the outputs, which cross the exchange. */
export const moveCost: CostRule = (node, model) => {
  const perTile = Math.ceil(outputBytes(node) / model.tiles);
  return model.parts({ compute: model.vertexCycles + model.copyCycles(perTile), exchange: model.exchangeCycles(perTile), supersteps: 1 });
};

/** Each tile writes its share of the outputs where they are, converting each element when `converts` (a cast). */
export function localCopyCost(converts: boolean): CostRule {
  return (node, model) => {
    const copy = model.copyCycles(Math.ceil(outputBytes(node) / model.tiles));
    return model.parts({ compute: model.vertexCycles + copy + (converts ? Math.ceil(outputElements(node) / model.tiles) : 0), supersteps: 1 });
  };
}

/** The one-pass kernel of two element-wise operations chained on each element of its first output (popops' fused map expressions). */
export function chainedCost(first: CyclesPerElement, second: CyclesPerElement, overFirstOutput: boolean): CostRule {
  return (node, model) => model.elementwise(chained(first, second), overFirstOutput ? node.outputs[0]!.elements : undefined);
}

/** Elements of all the outputs. */
export function outputElements(node: KernelNode): number {
  return node.outputs.reduce((n, t) => n + t.elements, 0);
}

/** Elements of all the inputs. */
export function inputElements(node: KernelNode): number {
  return node.inputs.reduce((n, t) => n + t.elements, 0);
}

/** Bytes of all the outputs. */
export function outputBytes(node: KernelNode): number {
  return node.outputs.reduce((n, t) => n + t.bytes, 0);
}

/** Bytes of all the inputs. */
export function inputBytes(node: KernelNode): number {
  return node.inputs.reduce((n, t) => n + t.bytes, 0);
}
