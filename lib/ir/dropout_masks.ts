/**
 * Dropout masks: values made from random draws and constants only that end
 * in products. tfjs's `tf.dropout` draws a uniform tensor, turns it into a
 * mask with `floor(draw + keep) / keep` and multiplies its input by it; the
 * gradient multiplies the output's gradient by the same mask.
 *
 * PopART never holds such a mask: its Dropout op draws the random bits inside
 * the op that applies them, and its DropoutGrad op takes the seed, not the
 * mask, and draws the same bits again (popart willow/src/op/dropout.cpp,
 * `DropoutGradOp::gradInputInfo`: the output's gradient and the seed). The
 * memory plan gives a mask no storage, a backward pass that reads one
 * re-runs its draw and arithmetic (see lib/strategy/recomputation.ts), and the
 * cost model charges the draw, the arithmetic and the product as one pass of
 * poprand's Dropout vertex (lib/ipu/kernel_cycles.ts).
 */
import { isRandomDraw } from '../backend/kernel_catalogue/kernel_catalogue.js';
import { readersOfValues, rootValues, type Graph } from './graph.js';

/** The kernel that applies a mask. */
const APPLY_MASK_KERNEL = 'Multiply';

/** For each value id, whether it is made from random draws and constants only (at least one draw). */
function randomDerivedValues(graph: Graph): boolean[] {
  const derived = new Array<boolean>(graph.values.length).fill(false);
  const constant = (id: number) => graph.values[id]!.source.kind === 'constant';
  for (const node of graph.nodes) {
    const fromDraws = isRandomDraw(node.kernel) || (!node.bodies && node.inputs.some((id) => derived[id]) && node.inputs.every((id) => derived[id] || constant(id)));
    if (fromDraws) for (const id of node.outputs) derived[id] = true;
  }
  return derived;
}

const masksOf = new WeakMap<Graph, readonly boolean[]>();

/**
 * For each value id, whether it is a dropout mask: made from random draws and
 * constants only, and read only by products and by nodes that make more of the
 * mask (never handed back by the graph). Found once per graph.
 */
export function dropoutMaskValues(graph: Graph): readonly boolean[] {
  let masks = masksOf.get(graph);
  if (!masks) {
    masks = findDropoutMasks(graph);
    masksOf.set(graph, masks);
  }
  return masks;
}

function findDropoutMasks(graph: Graph): boolean[] {
  const derived = randomDerivedValues(graph);
  const readers = readersOfValues(graph);
  const handedBack = new Set(rootValues(graph));
  const mask = new Array<boolean>(graph.values.length).fill(false);
  for (const node of [...graph.nodes].reverse()) {
    for (const id of node.outputs) {
      mask[id] =
        derived[id]! && !handedBack.has(id) && (readers.get(id) ?? []).every((reader) => reader.kernel === APPLY_MASK_KERNEL || reader.outputs.every((out) => mask[out]));
    }
  }
  return mask;
}
