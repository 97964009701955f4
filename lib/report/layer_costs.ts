/**
 * The memory and time of each layer of a compiled model, and of each block:
 * the weights its kernels read first, and the simulated cycles of its
 * kernels per micro-batch on its IPU, forward and backward (a backward
 * kernel counts for the layer of the forward kernel it differentiates). The
 * HTML report's tables, and the stage split of `poptfjs plan --ipus N`.
 */
import type { Graph, Node } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import { DEFAULT_AVAILABLE_MEMORY_PROPORTION } from '../ipu/hardware_analysis.js';
import { ipuKernelTarget, kernelCost, kernelCycles, type KernelTarget } from '../ipu/kernel_cycles.js';
import type { Executable } from '../executable/executable.js';
import { UNANNOTATED_BLOCK } from '../strategy/placement.js';

/** The name of the row of the kernels that compute the loss after the model. */
export const LOSS_ROW = '(loss)';
/** The name of the row of kernels run outside any layer or name scope. */
export const OUTSIDE_LAYERS_ROW = '(outside layers)';

/** What one layer (or name scope) of a compiled model holds and takes. */
export interface LayerCost {
  /** The tfjs layer, else the `ops.NameScope`, else {@link LOSS_ROW} or {@link OUTSIDE_LAYERS_ROW}. */
  readonly name: string;
  /** The block its kernels were traced in; outside blocks, the block of their stage if it has one, else {@link UNANNOTATED_BLOCK}. */
  readonly block: string;
  /** The IPU its kernels run on (the first kernel's, if they are split). */
  readonly ipu: number;
  /** Where in the user's code its first kernel was made (`file:line:column`), if known. */
  readonly source?: string;
  /** Bytes of the weights (parameters and captured constants) its kernels are the first to read. */
  readonly weightBytes: number;
  /** Simulated cycles of its forward kernels for one micro-batch. */
  readonly forwardCycles: number;
  /** Simulated cycles of its backward kernels for one micro-batch (0 in inference). */
  readonly backwardCycles: number;
}

/** The executable's target as the kernel cost model takes it, at the default memory proportion. */
export function kernelTarget(executable: Executable): KernelTarget {
  return ipuKernelTarget(executable.hardware.spec, {
    availableMemoryProportion: DEFAULT_AVAILABLE_MEMORY_PROPORTION,
    halfPartials: executable.numerics?.halfPartials ?? false,
  });
}

/** The forward node whose annotations a node's row follows: its own, or the node it differentiates. */
function forwardNode(graph: Graph, node: Node): Node {
  return node.annotations.gradOf === undefined ? node : (graph.nodes[node.annotations.gradOf] ?? node);
}

function rowName(node: Node): string {
  const a = node.annotations;
  return a.layer ?? a.scope ?? (a.loss ? LOSS_ROW : OUTSIDE_LAYERS_ROW);
}

/** Each layer's weights and cycles, in the order the model first runs them. */
export function layerCosts(executable: Executable): LayerCost[] {
  const { graph, placement } = executable;
  const target = kernelTarget(executable);
  const rows = new Map<string, { name: string; block: string; ipu: number; source?: string; weightBytes: number; forwardCycles: number; backwardCycles: number }>();
  const weightsRead = new Set<number>();
  for (const node of graph.nodes) {
    const forward = forwardNode(graph, node);
    const name = rowName(forward);
    const stage = placement.stages[placement.nodeStages[node.id]!];
    // A kernel traced outside blocks (the loss, say) belongs to the block of the stage it was placed in, when that stage has one.
    const block = forward.annotations.block ?? (stage?.blocks.length === 1 ? stage.blocks[0]! : UNANNOTATED_BLOCK);
    const key = `${block}\u0000${name}`;
    let row = rows.get(key);
    if (!row) {
      const source = forward.annotations.source;
      row = { name, block, ipu: stage?.ipu ?? 0, ...(source !== undefined ? { source } : {}), weightBytes: 0, forwardCycles: 0, backwardCycles: 0 };
      rows.set(key, row);
    }
    for (const id of node.inputs) {
      const kind = graph.values[id]!.source.kind;
      if ((kind === 'param' || kind === 'constant') && !weightsRead.has(id)) {
        weightsRead.add(id);
        row.weightBytes += valueBytes(graph, id);
      }
    }
    const cycles = kernelCycles(kernelCost(graph, node, target));
    if (node.annotations.pass === 'backward') row.backwardCycles += cycles;
    else row.forwardCycles += cycles;
  }
  return [...rows.values()];
}

/** What one block holds and takes: its layers' sums. */
export interface BlockCost {
  readonly block: string;
  readonly ipu: number;
  readonly layers: number;
  readonly weightBytes: number;
  readonly forwardCycles: number;
  readonly backwardCycles: number;
}

/** The layers' costs summed by block, in the order the blocks first run. */
export function blockCosts(layers: readonly LayerCost[]): BlockCost[] {
  const blocks = new Map<string, { block: string; ipu: number; layers: number; weightBytes: number; forwardCycles: number; backwardCycles: number }>();
  for (const l of layers) {
    const b = blocks.get(l.block) ?? { block: l.block, ipu: l.ipu, layers: 0, weightBytes: 0, forwardCycles: 0, backwardCycles: 0 };
    b.layers += 1;
    b.weightBytes += l.weightBytes;
    b.forwardCycles += l.forwardCycles;
    b.backwardCycles += l.backwardCycles;
    blocks.set(l.block, b);
  }
  return [...blocks.values()];
}
