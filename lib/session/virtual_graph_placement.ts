/**
 * From PopART's placement of an ONNX model to a poptfjs execution strategy:
 * the virtual graph mode and the `__ipu_number`, `__pipeline_stage` and
 * `__execution_phase` attributes of the model's nodes become blocks on the
 * IR's forward nodes and the strategy that places them, so sessions run on
 * the same placement, schedules and cost model as the model wrappers.
 *
 * - `Off`: one IPU.
 * - `Manual`: each node on the IPU its `__ipu_number` names (every node
 *   needs one). With pipelining, each pipeline stage (its
 *   `__pipeline_stage`, or its IPU when no node has a stage) is a stage of a
 *   `PipelinedExecution`; without, consecutive nodes on one IPU form a block
 *   and the blocks run one after another (`ShardedExecution`).
 * - `Auto`: as `Manual`, with the nodes split, in order, into one run per
 *   IPU of a replica, of about equal FLOPs.
 * - `ExecutionPhases`: each node in the phase its `__execution_phase` names,
 *   on its `__ipu_number` or IPU `phase % stages`; phases alternate between
 *   two groups of IPUs (`ParallelPhasedExecution`, 2 stages) or run one
 *   after another on the same IPUs (`SerialPhasedExecution`, 1 stage).
 */
import { PopartException } from '../common/errors.js';
import type { Graph, Node } from '../ir/graph.js';
import { nodeFlops } from '../ir/node_cost.js';
import { nodeLabel } from '../onnx/graph_evaluation.js';
import { NodeAttributes } from '../onnx/proto/node_attributes.js';
import type { ModelProto } from '../onnx/proto/onnx_proto.js';
import { AutoStage } from '../option_vocabulary/enums.js';
import type { ExecutionStrategy } from '../strategy/execution_strategy.js';
import { ParallelPhasedExecutionSpec, SerialPhasedExecutionSpec } from '../strategy/phased_execution.js';
import { PipelinedExecutionSpec, ShardedExecutionSpec } from '../strategy/staged_execution.js';
import { PhaseSpec, StageSpec } from '../strategy/stages_and_phases.js';
import { EXECUTION_PHASE_ATTRIBUTE, PIPELINE_STAGE_ATTRIBUTE, VIRTUAL_GRAPH_ATTRIBUTE } from './placement_attributes.js';
import type { SessionSettings } from './session_options.js';

/** The IR with its forward nodes in blocks, and the strategy that places the blocks. */
export interface VirtualGraphPlacement {
  readonly graph: Graph;
  readonly strategy: ExecutionStrategy;
}

/** The placement attributes of one ONNX node. */
interface NodePlacement {
  readonly ipu?: number;
  readonly stage?: number;
  readonly phase?: number;
}

/** The placement attributes of the model's nodes, by node label (the IR's `layer` annotation). */
function nodePlacements(model: ModelProto): Map<string, NodePlacement> {
  const placements = new Map<string, NodePlacement>();
  model.graph!.node.forEach((node, index) => {
    const label = nodeLabel(node, index);
    const attrs = new NodeAttributes(node.attribute, `node '${label}'`);
    const read = (name: string) => (attrs.has(name) ? attrs.int(name) : undefined);
    const placement = { ipu: read(VIRTUAL_GRAPH_ATTRIBUTE), stage: read(PIPELINE_STAGE_ATTRIBUTE), phase: read(EXECUTION_PHASE_ATTRIBUTE) };
    const known = placements.get(label);
    if (known && JSON.stringify(known) !== JSON.stringify(placement)) {
      throw new PopartException(`two nodes are named '${label}' and placed differently; give the nodes distinct names`);
    }
    placements.set(label, placement);
  });
  return placements;
}

/** True for the nodes of the model itself (forward pass, not the loss scaling poptfjs adds). */
function isModelNode(node: Node): boolean {
  return node.annotations.pass === 'forward' && !node.annotations.loss;
}

function listed(labels: Iterable<string>): string {
  const all = [...new Set(labels)];
  return `${all
    .slice(0, 5)
    .map((l) => `'${l}'`)
    .join(', ')}${all.length > 5 ? ` and ${all.length - 5} more` : ''}`;
}

/** The graph with each model node's block (and IPU) set by `blockOf`. */
function withBlocks(graph: Graph, blockOf: (node: Node) => { block: string; ipu: number }): Graph {
  return {
    ...graph,
    nodes: graph.nodes.map((node) => (isModelNode(node) ? { ...node, annotations: { ...node.annotations, ...blockOf(node) } } : node)),
  };
}

/** The value of one attribute for every model node; an error listing the nodes without it. */
function requiredAttribute(graph: Graph, placements: ReadonlyMap<string, NodePlacement>, key: keyof NodePlacement, attribute: string, hint: string): Map<number, number> {
  const values = new Map<number, number>();
  const missing: string[] = [];
  for (const node of graph.nodes) {
    if (!isModelNode(node)) continue;
    const value = placements.get(node.annotations.layer ?? '')?.[key];
    if (value === undefined) missing.push(node.annotations.layer ?? node.kernel);
    else values.set(node.id, value);
  }
  if (missing.length > 0) throw new PopartException(`node(s) ${listed(missing)} have no ${attribute} attribute; ${hint}`);
  return values;
}

/** Consecutive nodes on one IPU as blocks, run one after another. */
function shardedRuns(graph: Graph, ipuOf: ReadonlyMap<number, number>): VirtualGraphPlacement {
  const visits = new Map<number, number>();
  let current: { ipu: number; block: string } | undefined;
  const blockOf = new Map<number, { block: string; ipu: number }>();
  for (const node of graph.nodes) {
    if (!isModelNode(node)) continue;
    const ipu = ipuOf.get(node.id)!;
    if (current?.ipu !== ipu) {
      const visit = (visits.get(ipu) ?? 0) + 1;
      visits.set(ipu, visit);
      current = { ipu, block: visit === 1 ? `ipu ${ipu}` : `ipu ${ipu} #${visit}` };
    }
    blockOf.set(node.id, { block: current.block, ipu });
  }
  return { graph: withBlocks(graph, (node) => blockOf.get(node.id)!), strategy: new ShardedExecutionSpec(AutoStage.AutoIncrement) };
}

/** Each pipeline stage as a block on its IPU, in a pipeline. */
function pipelineStages(graph: Graph, ipuOf: ReadonlyMap<number, number>, stageOf: ReadonlyMap<number, number>): VirtualGraphPlacement {
  const stageIpu = new Map<number, number>();
  for (const [id, stage] of stageOf) {
    const ipu = ipuOf.get(id)!;
    const known = stageIpu.get(stage);
    if (known !== undefined && known !== ipu) {
      throw new PopartException(
        `pipeline stage ${stage} has nodes on IPU ${known} and on IPU ${ipu} (e.g. '${graph.nodes[id]!.annotations.layer}'); a pipeline stage runs on one IPU`,
      );
    }
    stageIpu.set(stage, ipu);
  }
  const stages = [...stageIpu.keys()].sort((a, b) => a - b).map((stage) => new StageSpec(`stage ${stage}`).ipu(stageIpu.get(stage)!));
  return {
    graph: withBlocks(graph, (node) => ({ block: `stage ${stageOf.get(node.id)!}`, ipu: ipuOf.get(node.id)! })),
    strategy: new PipelinedExecutionSpec(...stages),
  };
}

/** The IPU of each model node, splitting the nodes into `ipus` consecutive runs of about equal FLOPs. */
function automaticIpus(graph: Graph, ipus: number): Map<number, number> {
  const nodes = graph.nodes.filter(isModelNode);
  const flops = nodes.map((node) => Math.max(1, nodeFlops(graph, node)));
  const total = flops.reduce((a, b) => a + b, 0);
  const ipuOf = new Map<number, number>();
  let done = 0;
  nodes.forEach((node, i) => {
    ipuOf.set(node.id, Math.min(ipus - 1, Math.floor((done * ipus) / total)));
    done += flops[i]!;
  });
  return ipuOf;
}

function manualOrAuto(graph: Graph, placements: ReadonlyMap<string, NodePlacement>, settings: SessionSettings, ipusPerReplica: number): VirtualGraphPlacement {
  const ipuOf =
    settings.virtualGraphMode === 'Auto'
      ? automaticIpus(graph, ipusPerReplica)
      : requiredAttribute(graph, placements, 'ipu', VIRTUAL_GRAPH_ATTRIBUTE, 'with VirtualGraphMode.Manual every node needs one: set it with builder.virtualGraph(...)');
  if (!settings.enablePipelining) return shardedRuns(graph, ipuOf);
  const staged = graph.nodes.some((node) => isModelNode(node) && placements.get(node.annotations.layer ?? '')?.stage !== undefined);
  const stageOf =
    settings.virtualGraphMode === 'Manual' && staged
      ? requiredAttribute(
          graph,
          placements,
          'stage',
          PIPELINE_STAGE_ATTRIBUTE,
          'when some nodes have a pipeline stage, every node needs one: set it with builder.pipelineStage(...)',
        )
      : ipuOf;
  return pipelineStages(graph, ipuOf, stageOf);
}

function executionPhases(graph: Graph, placements: ReadonlyMap<string, NodePlacement>, settings: SessionSettings): VirtualGraphPlacement {
  const { phases, stages } = settings.executionPhaseSettings;
  const phaseOf = requiredAttribute(
    graph,
    placements,
    'phase',
    EXECUTION_PHASE_ATTRIBUTE,
    'with VirtualGraphMode.ExecutionPhases every node needs one: set it with builder.executionPhase(...)',
  );
  const ipuOf = new Map<number, number>();
  const ipusOfPhase = new Map<number, Set<number>>();
  for (const [id, phase] of phaseOf) {
    if (phase >= phases) {
      throw new PopartException(
        `node '${graph.nodes[id]!.annotations.layer}' is in execution phase ${phase}, but executionPhaseSettings.phases is ${phases}; set it to at least ${phase + 1}`,
      );
    }
    const ipu = placements.get(graph.nodes[id]!.annotations.layer ?? '')?.ipu ?? phase % stages;
    ipuOf.set(id, ipu);
    ipusOfPhase.set(phase, (ipusOfPhase.get(phase) ?? new Set()).add(ipu));
  }
  const last = Math.max(...ipusOfPhase.keys());
  const specs: PhaseSpec[] = [];
  for (let phase = 0; phase <= last; phase++) {
    const ipus = ipusOfPhase.get(phase);
    if (!ipus) throw new PopartException(`execution phase ${phase} has no operations, but phase ${last} has; number the phases from 0 without gaps`);
    specs.push(new PhaseSpec(...[...ipus].sort((a, b) => a - b).map((ipu) => new StageSpec(`phase ${phase} ipu ${ipu}`).ipu(ipu))));
  }
  return {
    graph: withBlocks(graph, (node) => ({ block: `phase ${phaseOf.get(node.id)!} ipu ${ipuOf.get(node.id)!}`, ipu: ipuOf.get(node.id)! })),
    strategy: stages === 2 ? new ParallelPhasedExecutionSpec(...specs) : new SerialPhasedExecutionSpec(...specs),
  };
}

/**
 * The placement of an imported graph as the session options and the model's
 * node attributes say; `ipusPerReplica` is what `Auto` splits the graph over.
 */
export function virtualGraphPlacement(graph: Graph, model: ModelProto, settings: SessionSettings, ipusPerReplica: number): VirtualGraphPlacement {
  const mode = settings.virtualGraphMode;
  if (settings.enablePipelining && mode !== 'Manual' && mode !== 'Auto') {
    throw new PopartException(`enablePipelining needs virtualGraphMode Manual or Auto (it is ${mode}): a pipeline runs its stages on different IPUs`);
  }
  switch (mode) {
    case 'Off':
      return { graph, strategy: new PipelinedExecutionSpec(AutoStage.SameAsIpu) };
    case 'Manual':
    case 'Auto':
      return manualOrAuto(graph, nodePlacements(model), settings, ipusPerReplica);
    case 'ExecutionPhases':
      return executionPhases(graph, nodePlacements(model), settings);
  }
}
