/**
 * What a search splits a model into pipeline stages by: its *units*, the
 * consecutive parts of its forward pass that stay together on one IPU. A
 * model with blocks (`Block`, `BeginBlock`, `BlockFunction`, or an ONNX
 * model's placement) is split between blocks; a model without is split
 * between its layers (or ONNX nodes). Each unit becomes a block of the
 * graph named after it, so a stage of the search's configuration lists the
 * units it holds (`Stage("layer0", "layer1").ipu(0)`), as a PopTorch
 * configuration lists block ids. Backward nodes follow the forward node
 * they differentiate, as placement places them. A model split between its
 * own blocks keeps its graph as it is.
 */
import type { Graph, Node } from '../ir/graph.js';
import { UNANNOTATED_BLOCK } from '../strategy/placement.js';

/** A graph whose forward nodes are in blocks named after its units. */
export interface UnitGraph {
  readonly graph: Graph;
  /** The units in the order the model runs them. */
  readonly units: readonly string[];
  /** Whether the units are the model's own blocks (else its layers). */
  readonly blocks: boolean;
  /** The IPUs the model's own blocks asked for, by block (a split that moves them must say so). */
  readonly blockIpus: ReadonlyMap<string, number>;
}

function isModelNode(node: Node): boolean {
  return node.annotations.pass === 'forward' && !node.annotations.loss;
}

/**
 * The units of a traced graph, and the graph with each unit a block. A unit
 * met again after another one (a layer called twice, apart) is a unit of its
 * own each time (`name#2`), so units always follow the model's order. A
 * model without blocks is split by `unitOfLayer` of its nodes' layers (by
 * default each layer is a unit; see {@link onnxModuleUnit}).
 */
export function unitGraph(graph: Graph, unitOfLayer: (layer: string) => string = (layer) => layer): UnitGraph {
  const modelNodes = graph.nodes.filter(isModelNode);
  const ownBlocks = new Set(modelNodes.map((n) => n.annotations.block ?? UNANNOTATED_BLOCK));
  const byBlock = ownBlocks.size > 1 || !ownBlocks.has(UNANNOTATED_BLOCK);
  const keyOf = (node: Node): string | undefined => {
    if (byBlock) return node.annotations.block ?? UNANNOTATED_BLOCK;
    const { layer } = node.annotations;
    return layer !== undefined ? unitOfLayer(layer) : node.annotations.scope;
  };
  const blockIpus = new Map<string, number>();
  for (const node of modelNodes) {
    const { block, ipu } = node.annotations;
    if (block !== undefined && ipu !== undefined && !blockIpus.has(block)) blockIpus.set(block, ipu);
  }
  const unitOfNode = new Map<number, string>();
  const units: string[] = [];
  const visits = new Map<string, number>();
  let current: { key: string; unit: string } | undefined;
  const pending: Node[] = [];
  for (const node of modelNodes) {
    const key = keyOf(node);
    if (key === undefined || key === current?.key) {
      // Nodes outside layers go with the unit before them (those before the first layer, with the first).
      if (current) unitOfNode.set(node.id, current.unit);
      else pending.push(node);
      continue;
    }
    const visit = (visits.get(key) ?? 0) + 1;
    visits.set(key, visit);
    current = { key, unit: visit === 1 ? key : `${key}#${visit}` };
    units.push(current.unit);
    unitOfNode.set(node.id, current.unit);
    for (const early of pending.splice(0)) unitOfNode.set(early.id, current.unit);
  }
  if (units.length === 0) {
    units.push(UNANNOTATED_BLOCK);
    for (const node of pending) unitOfNode.set(node.id, UNANNOTATED_BLOCK);
  }
  // Only the block changes, and only where the unit is not the node's own block already.
  const nodes = graph.nodes.map((node) => {
    let unit = unitOfNode.get(node.id);
    if (unit === undefined && node.annotations.pass === 'backward' && node.annotations.gradOf !== undefined) unit = unitOfNode.get(node.annotations.gradOf);
    if (unit === undefined || unit === node.annotations.block) return node;
    return { ...node, annotations: { ...node.annotations, block: unit } };
  });
  return { graph: { ...graph, nodes }, units, blocks: byBlock, blockIpus };
}

/**
 * `units` with its units named `names` (as many, in the same order): the
 * units of a model traced again, whose layers tfjs named anew (`dense_7`
 * where the first trace had `dense_1`), under the names of the first trace.
 */
export function renamedUnits(units: UnitGraph, names: readonly string[]): UnitGraph {
  const rename = new Map(units.units.map((unit, i) => [unit, names[i]!]));
  const nodes = units.graph.nodes.map((node) => {
    const block = node.annotations.block === undefined ? undefined : rename.get(node.annotations.block);
    return block === undefined ? node : { ...node, annotations: { ...node.annotations, block } };
  });
  return { ...units, graph: { ...units.graph, nodes }, units: [...names] };
}

/**
 * The unit of an ONNX node, by the name PyTorch's exporter gives it: the
 * module that ran it (`/encoder/layers/encoder_layer_0/mlp/mlp.0` for
 * `/encoder/layers/encoder_layer_0/mlp/mlp.0/MatMul`), the model's own code
 * for a node at the top (`/`), and the node itself for a name without a path
 * (PopART's builder). Modules, unlike nodes, are the same at every
 * micro-batch: a reshape or an expand of a batch of one is no kernel, and
 * would otherwise leave its node out of the units at that size.
 */
export function onnxModuleUnit(layer: string): string {
  const cut = layer.lastIndexOf('/');
  return cut > 0 ? layer.slice(0, cut) : cut === 0 ? '/' : layer;
}
