/**
 * Placement: from the blocks stamped on a traced graph and the execution
 * strategy to stages on IPUs (and phases), checked against PopTorch's rules.
 * The result is plain data that can be printed, serialized and tested.
 *
 * Every node gets a stage (its IPU) and a *unit*: the forward or backward part
 * of a group of stages that run together (one stage in a pipeline or in
 * sharding; all the stages of a phase, which run in parallel and may exchange
 * data). Units are ordered F0 < F1 < ... < F(G-1) < B(G-1) < ... < B0, an
 * order in which one micro-batch can run; a strategy's schedule interleaves
 * units over micro-batches and IPUs.
 *
 * In a phased strategy a block may span several IPUs of its phase, as in
 * PopTorch: a `Stage` without an IPU of its own places each of its blocks'
 * nodes on the IPU of the `Block` scope that traced it (`Block.run({ userId:
 * 'A', ipuId: 0 }, ...)` then `Block.run({ userId: 'A', ipuId: 2 }, ...)`),
 * and such a stage becomes one placed stage per IPU it uses, each listing
 * the block. In the other strategies a block runs on one IPU.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph, Node, Pass } from '../ir/graph.js';
import type { ExecutionStrategyData, PhasedExecutionData, StagedExecutionData } from './execution_strategy_data.js';
import type { Liveness } from '../option_vocabulary/enums.js';

/** The block of nodes traced outside any block (before the first `BeginBlock`, or without annotations). */
export const UNANNOTATED_BLOCK = '(unannotated)';

/** A stage: blocks (or, phased, the parts of blocks) that run together on one IPU. */
export interface PlacedStage {
  /** Position of the stage in model order. */
  readonly index: number;
  /** PopTorch's stage id. */
  readonly stageId: number;
  readonly ipu: number;
  readonly blocks: readonly string[];
  /** The forward phase of a phased strategy. */
  readonly phase?: number;
}

/** The forward or backward part of a group of stages that run together. */
export interface PlacedUnit {
  readonly pass: Pass;
  /** Indices into {@link Placement.stages}. */
  readonly stages: readonly number[];
  /** The IPUs of those stages. */
  readonly ipus: readonly number[];
}

/** Where every part of the model runs. */
export interface Placement {
  readonly strategy: ExecutionStrategyData['type'];
  readonly stages: readonly PlacedStage[];
  /** Units in execution order for one micro-batch. */
  readonly units: readonly PlacedUnit[];
  /** The unit of each node, by node id. */
  readonly nodeUnits: readonly number[];
  /** The stage (and so the IPU) of each node, by node id. */
  readonly nodeStages: readonly number[];
  /** IPUs used by one replica. */
  readonly ipusPerReplica: number;
  /** IPUs reserved in all (replicas included; a power of two). */
  readonly ipusReserved: number;
  /** Phased strategies: the number of forward phases, and how tensors live across them. */
  readonly phased?: { readonly phases: number; readonly separateBackwardPhase: boolean; readonly liveness: Liveness; readonly parallel: boolean };
}

/** What placement needs besides the graph. */
export interface PlacementRequest {
  readonly strategy: ExecutionStrategyData;
  readonly replicationFactor: number;
  readonly autoRoundNumIPUs: boolean;
}

function placementError(message: string, location = ''): PoptfjsError {
  return new PoptfjsError(message, { type: 'placement', location });
}

/** A block met in the forward pass: its id, IPU (if given) and first node. */
interface ModelBlock {
  readonly id: string;
  /** The IPU of its first node that has one. */
  readonly ipu: number | undefined;
  /** Every IPU its forward nodes were given, in the order the model met them (several only in phased strategies). */
  readonly ipus: readonly number[];
  readonly firstNode: Node;
}

function nodeWhere(node: Node): string {
  return `kernel ${node.kernel}${node.annotations.layer ? ` in layer '${node.annotations.layer}'` : ''}`;
}

/**
 * The blocks of the model, in the order the model first enters them. A block
 * whose nodes were given several IPUs is an error unless `spanIpus` (phased
 * strategies) allows it.
 */
function modelBlocks(graph: Graph, spanIpus: boolean): ModelBlock[] {
  const blocks = new Map<string, { id: string; ipus: number[]; firstNode: Node }>();
  for (const node of graph.nodes) {
    if (node.annotations.pass !== 'forward' || node.annotations.loss) continue;
    const id = node.annotations.block ?? UNANNOTATED_BLOCK;
    const ipu = node.annotations.block === undefined ? 0 : node.annotations.ipu;
    let known = blocks.get(id);
    if (!known) {
      known = { id, ipus: [], firstNode: node };
      blocks.set(id, known);
    }
    if (ipu === undefined || known.ipus.includes(ipu)) continue;
    if (known.ipus.length > 0 && !spanIpus) {
      throw placementError(
        `block '${id}' is placed on IPU ${known.ipus[0]} and on IPU ${ipu}; a block runs on one IPU (only a phased execution lets a block span the IPUs of its phase)`,
        id,
      );
    }
    known.ipus.push(ipu);
  }
  if (blocks.size === 0) blocks.set(UNANNOTATED_BLOCK, { id: UNANNOTATED_BLOCK, ipus: [0], firstNode: graph.nodes[0]! });
  return [...blocks.values()].map((b) => ({ ...b, ipu: b.ipus[0] }));
}

/** The stage id, IPU and (phased) phase a block, or a block's part on one IPU, is placed with. */
interface BlockStage {
  readonly stageId: number;
  readonly ipu: number;
  readonly phase?: number;
}

interface StageAssignment {
  /** Stage id, IPU and (phased) phase of each block (of its part on its first IPU, for a block spanning IPUs). */
  readonly byBlock: Map<string, BlockStage>;
  /** Phased: the part of each block on each IPU it spans, when it spans several. */
  readonly byBlockIpu?: Map<string, Map<number, BlockStage>>;
}

function explicitStages(data: StagedExecutionData, blocks: ModelBlock[]): StageAssignment {
  const known = new Set(blocks.map((b) => b.id));
  const byBlock = new Map<string, { stageId: number; ipu: number }>();
  data.stages.forEach((stage, stageId) => {
    for (const block of stage.blocks) {
      if (!known.has(block)) {
        throw placementError(
          `${data.type}: stage ${stageId} refers to block '${block}', but the model has no such block (its blocks: ${[...known].map((b) => `'${b}'`).join(', ')})`,
          block,
        );
      }
      const first = blocks.find((b) => b.id === block)!;
      byBlock.set(block, { stageId, ipu: stage.ipu ?? first.ipu ?? stageId });
    }
  });
  for (const block of blocks) {
    if (byBlock.has(block.id)) continue;
    if (block.id === UNANNOTATED_BLOCK) {
      byBlock.set(block.id, { stageId: 0, ipu: data.stages[0]?.ipu ?? 0 });
      continue;
    }
    throw placementError(
      `${data.type}: block '${block.id}' is in none of the stages (${data.stages.map((s) => `Stage(${s.blocks.join(', ')})`).join(', ')}); add it to a stage`,
      block.id,
    );
  }
  return { byBlock };
}

function autoStages(data: StagedExecutionData, blocks: ModelBlock[]): StageAssignment {
  const byBlock = new Map<string, { stageId: number; ipu: number }>();
  let next = 0;
  for (const block of blocks) {
    if (data.autoStage === 'SameAsIpu') {
      if (block.ipu === undefined) {
        throw placementError(
          `AutoStage.SameAsIpu needs an IPU for every block, and block '${block.id}' has none: give it an ipuId or use AutoStage.AutoIncrement or explicit Stages`,
          block.id,
        );
      }
      byBlock.set(block.id, { stageId: block.ipu, ipu: block.ipu });
    } else {
      const stageId = next++;
      byBlock.set(block.id, { stageId, ipu: block.ipu ?? stageId });
    }
  }
  return { byBlock };
}

/** Every block a phased stage names is a block of the model. */
function checkStageBlocks(data: PhasedExecutionData, stageBlocks: readonly string[], known: ReadonlyMap<string, ModelBlock>, p: number): void {
  for (const block of stageBlocks) {
    if (!known.has(block)) {
      throw placementError(
        `${data.type}: phase ${p} refers to block '${block}', but the model has no such block (its blocks: ${[...known.keys()].map((b) => `'${b}'`).join(', ')})`,
        block,
      );
    }
  }
}

/** In a parallel phased execution, even phases run on even IPUs and odd phases on odd ones. */
function checkParallelPhaseIpus(ipus: readonly number[], p: number): void {
  for (const ipu of ipus) {
    if (ipu % 2 !== p % 2) {
      throw placementError(
        `ParallelPhasedExecution: phase ${p} runs on IPU ${ipu}, but ${p % 2 === 0 ? 'even' : 'odd'} phases must run on ${p % 2 === 0 ? 'even' : 'odd'} IPUs`,
      );
    }
  }
}

/**
 * Phase `p`, whose stages run on `phaseIpus[p]`, has one stage per IPU of its
 * group and runs on the same group as its reference phase (phase 0, or in a
 * parallel execution the first phase of its parity), when both phases' stages
 * have IPUs of their own (always, in a parallel execution).
 */
function checkPhaseGroup(data: PhasedExecutionData, phaseIpus: readonly number[][], ownIpus: readonly boolean[], p: number): void {
  const parallel = data.type === 'ParallelPhasedExecution';
  const ipus = phaseIpus[p]!;
  const reference = parallel ? p % 2 : 0;
  if (!parallel && !(ownIpus[p] && ownIpus[reference])) return;
  if (ipus.length !== phaseIpus[0]!.length) {
    throw placementError(`${data.type}: phase ${p} has ${ipus.length} stage(s) but phase 0 has ${phaseIpus[0]!.length}; every phase needs one stage per IPU of its group`);
  }
  const sorted = (list: readonly number[]) =>
    list
      .slice()
      .sort((a, b) => a - b)
      .join(',');
  const group = sorted(ipus);
  const referenceGroup = sorted(phaseIpus[reference]!);
  if (group !== referenceGroup) {
    throw placementError(
      `${data.type}: phase ${p} runs on IPUs ${group} but phase ${reference} on IPUs ${referenceGroup}; ` +
        (parallel ? 'even phases share one group of IPUs and odd phases the other' : 'serial phases all run on the same group of IPUs'),
    );
  }
}

function phasedStages(data: PhasedExecutionData, blocks: ModelBlock[]): StageAssignment {
  const known = new Map(blocks.map((b) => [b.id, b]));
  const byBlock = new Map<string, BlockStage>();
  const byBlockIpu = new Map<string, Map<number, BlockStage>>();
  let stageId = 0;
  // The IPU of each placed stage of each phase.
  const phaseIpus: number[][] = [];
  // Whether every stage of each phase has an IPU of its own (a serial phase whose stages take their blocks' IPUs may run elsewhere, as in PopTorch).
  const ownIpus: boolean[] = [];
  data.phases.forEach((phase, p) => {
    const ipus: number[] = [];
    phase.stages.forEach((stage, s) => {
      checkStageBlocks(data, stage.blocks, known, p);
      const stageIpus = stage.ipu !== undefined ? [stage.ipu] : blockIpus(data, stage.blocks, known, s, p);
      if (data.type === 'ParallelPhasedExecution') checkParallelPhaseIpus(stageIpus, p);
      const parts = new Map(stageIpus.map((ipu) => [ipu, { stageId: stageId++, ipu, phase: p }]));
      for (const block of stage.blocks) {
        const own = stage.ipu !== undefined ? [stage.ipu] : known.get(block)!.ipus;
        byBlock.set(block, parts.get(own[0]!)!);
        if (own.length > 1) byBlockIpu.set(block, new Map(own.map((ipu) => [ipu, parts.get(ipu)!])));
      }
      ipus.push(...stageIpus);
    });
    phaseIpus.push(ipus);
    ownIpus.push(phase.stages.every((stage) => stage.ipu !== undefined));
    checkPhaseGroup(data, phaseIpus, ownIpus, p);
  });
  for (const block of blocks) {
    if (!byBlock.has(block.id)) {
      throw placementError(`${data.type}: block '${block.id}' is in none of the phases; add it to a Stage of a Phase`, block.id);
    }
  }
  return { byBlock, byBlockIpu };
}

/**
 * The IPUs of a phased stage that has none of its own: those its blocks'
 * nodes were given (ascending). An error when no block has one, or one block
 * has none.
 */
function blockIpus(data: PhasedExecutionData, stageBlocks: readonly string[], known: ReadonlyMap<string, ModelBlock>, s: number, p: number): number[] {
  const without = stageBlocks.filter((b) => known.get(b)!.ipus.length === 0);
  if (without.length === stageBlocks.length) {
    throw placementError(
      `${data.type}: stage ${s} of phase ${p} (blocks ${stageBlocks.join(', ')}) has no IPU; set it with strategy.phase(${p}).ipus(...) or Stage(...).ipu(n), or give its blocks an ipuId`,
    );
  }
  if (without.length > 0) {
    throw placementError(
      `${data.type}: block '${without[0]}' of stage ${s} of phase ${p} has no IPU, and neither has the stage; give the block an ipuId, or set the stage's IPU with Stage(...).ipu(n)`,
      without[0],
    );
  }
  return [...new Set(stageBlocks.flatMap((b) => known.get(b)!.ipus))].sort((a, b) => a - b);
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

/** The stage id, IPU and (phased) phase of each block, as the strategy assigns them. */
function assignStages(strategy: ExecutionStrategyData, phased: boolean, blocks: ModelBlock[]): StageAssignment {
  if (phased) return phasedStages(strategy as PhasedExecutionData, blocks);
  const staged = strategy as StagedExecutionData;
  return staged.stages.length > 0 ? explicitStages(staged, blocks) : autoStages(staged, blocks);
}

/** In a pipeline, stage ids ascend in the order the model runs its blocks. */
function checkPipelineOrder(blocks: readonly ModelBlock[], assignment: StageAssignment): void {
  let previous: { block: string; stageId: number; ipu: number } | undefined;
  for (const block of blocks) {
    const a = assignment.byBlock.get(block.id)!;
    if (previous && a.stageId < previous.stageId) {
      throw placementError(
        `PipelinedExecution: block '${block.id}' on IPU ${a.ipu} gets stage ${a.stageId}, but it runs after block '${previous.block}' on IPU ${previous.ipu} with stage ${previous.stageId}; ` +
          'stage ids must ascend in the order the model runs (use AutoStage.AutoIncrement, or explicit Stages)',
        block.id,
      );
    }
    previous = { block: block.id, ...a };
  }
}

/** In a phased strategy, phases follow the order the model runs its blocks. */
function checkPhaseOrder(strategyType: string, blocks: readonly ModelBlock[], assignment: StageAssignment): void {
  let previous: { block: string; phase: number } | undefined;
  for (const block of blocks) {
    const phase = assignment.byBlock.get(block.id)!.phase!;
    if (previous && phase < previous.phase) {
      throw placementError(
        `${strategyType}: block '${block.id}' is in phase ${phase} but runs after block '${previous.block}' of phase ${previous.phase}; phases must follow the model's order`,
        block.id,
      );
    }
    previous = { block: block.id, phase };
  }
}

/**
 * The stages in model order: blocks with the same stage id form one stage; in
 * a pipeline, consecutive stages on the same IPU merge. A phased block spanning
 * IPUs is in one stage per IPU; phased stages are ordered by stage id.
 */
function modelOrderStages(strategyType: string, phased: boolean, blocks: readonly ModelBlock[], assignment: StageAssignment): PlacedStage[] {
  const stages: Array<{ stageId: number; ipu: number; blocks: string[]; phase?: number }> = [];
  const byStageId = new Map<number, number>();
  for (const block of blocks) {
    const parts = assignment.byBlockIpu?.get(block.id)?.values() ?? [assignment.byBlock.get(block.id)!];
    for (const a of parts) {
      let index = byStageId.get(a.stageId);
      const last = stages[stages.length - 1];
      if (index === undefined && strategyType === 'PipelinedExecution' && last && last.ipu === a.ipu) index = stages.length - 1;
      if (index === undefined) {
        index = stages.length;
        stages.push({ stageId: a.stageId, ipu: a.ipu, blocks: [], ...(a.phase !== undefined ? { phase: a.phase } : {}) });
      }
      byStageId.set(a.stageId, index);
      stages[index]!.blocks.push(block.id);
    }
  }
  if (phased) stages.sort((x, y) => x.stageId - y.stageId);
  return stages.map((s, index) => ({ index, ...s }));
}

/**
 * The stage of a block's part on an IPU: the block's part on `ipu`, else its
 * part on its first IPU, else its first part (a node that names no IPU).
 */
function blockStageLookup(stages: readonly PlacedStage[], assignment: StageAssignment): (block: string, ipu: number | undefined) => number | undefined {
  const blockParts = new Map<string, Map<number, number>>();
  for (const stage of stages) {
    for (const block of stage.blocks) {
      if (!blockParts.has(block)) blockParts.set(block, new Map());
      blockParts.get(block)!.set(stage.ipu, stage.index);
    }
  }
  return (block, ipu) => {
    const parts = blockParts.get(block);
    if (!parts) return undefined;
    return (ipu === undefined ? undefined : parts.get(ipu)) ?? parts.get(assignment.byBlock.get(block)!.ipu) ?? parts.values().next().value;
  };
}

/** The stages that run together, by index: each stage alone, or the stages of a phase. */
function stageGroups(stages: readonly PlacedStage[], phased: boolean): number[][] {
  const groups: number[][] = [];
  for (const stage of stages) {
    const last = groups[groups.length - 1];
    if (phased && last && stages[last[0]!]!.phase === stage.phase) last.push(stage.index);
    else groups.push([stage.index]);
  }
  return groups;
}

/** The units: the forward part of each group in order, then the backward parts in reverse. */
function passUnits(groups: readonly number[][], stages: readonly PlacedStage[]): PlacedUnit[] {
  return [
    ...groups.map((g) => ['forward', g] as const),
    ...groups
      .slice()
      .reverse()
      .map((g) => ['backward', g] as const),
  ].map(([pass, members]) => ({ pass, stages: members, ipus: members.map((m) => stages[m]!.ipu) }));
}

/** The unit and stage of each node of `graph`. */
function placeNodes(graph: Graph, stages: readonly PlacedStage[], groups: readonly number[][], units: readonly PlacedUnit[], assignment: StageAssignment) {
  const stageOfBlock = blockStageLookup(stages, assignment);
  const groupOfStage = new Map<number, number>();
  groups.forEach((members, g) => members.forEach((stage) => groupOfStage.set(stage, g)));
  const unitOfGroup = (pass: Pass, group: number) => (pass === 'forward' ? group : 2 * groups.length - 1 - group);
  return assignUnits(graph, {
    forwardStage: (node) =>
      node.annotations.pass === 'forward' && !node.annotations.loss
        ? stageOfBlock(node.annotations.block ?? UNANNOTATED_BLOCK, node.annotations.block === undefined ? undefined : node.annotations.ipu)!
        : undefined,
    blockStage: (node) => (node.annotations.block === undefined ? undefined : stageOfBlock(node.annotations.block, node.annotations.ipu)),
    unitOf: (pass, stage) => unitOfGroup(pass, groupOfStage.get(stage)!),
    firstStageOf: (unit) => units[unit]!.stages[0]!,
    lastForwardStage: stages.length - 1,
    forwardUnits: groups.length,
  });
}

/** IPUs reserved in all: a power of two, the model's own count when it is one, else rounded up when `autoRoundNumIPUs` allows, else an error. */
function reservedIpus(ipusPerReplica: number, request: PlacementRequest): number {
  const total = ipusPerReplica * request.replicationFactor;
  if (isPowerOfTwo(total)) return total;
  if (!request.autoRoundNumIPUs) {
    throw placementError(
      `the model uses ${total} IPU(s) (${ipusPerReplica} per replica × ${request.replicationFactor} replica(s)), and IPUs are reserved in powers of two: ` +
        `place the model on ${nextPowerOfTwo(total) / request.replicationFactor} IPU(s) per replica, or set opts.autoRoundNumIPUs(true) to reserve ${nextPowerOfTwo(total)}`,
    );
  }
  return nextPowerOfTwo(total);
}

/** What a phased placement records of its strategy. */
function phasedSummary(data: PhasedExecutionData): NonNullable<Placement['phased']> {
  return {
    phases: data.phases.length,
    separateBackwardPhase: data.separateBackwardPhase,
    liveness: data.tensorsLiveness,
    parallel: data.type === 'ParallelPhasedExecution',
  };
}

/** Places the traced graph according to the strategy; an error names the block, stage and rule broken. */
export function placeGraph(graph: Graph, request: PlacementRequest): Placement {
  const { strategy } = request;
  const phased = strategy.type === 'SerialPhasedExecution' || strategy.type === 'ParallelPhasedExecution';
  const blocks = modelBlocks(graph, phased);
  const assignment = assignStages(strategy, phased, blocks);
  if (strategy.type === 'PipelinedExecution') checkPipelineOrder(blocks, assignment);
  if (phased) checkPhaseOrder(strategy.type, blocks, assignment);
  const stages = modelOrderStages(strategy.type, phased, blocks, assignment);
  const groups = stageGroups(stages, phased);
  const units = passUnits(groups, stages);
  const { nodeUnits, nodeStages } = placeNodes(graph, stages, groups, units, assignment);
  const ipusPerReplica = Math.max(...stages.map((s) => s.ipu)) + 1;
  return {
    strategy: strategy.type,
    stages,
    units,
    nodeUnits,
    nodeStages,
    ipusPerReplica,
    ipusReserved: reservedIpus(ipusPerReplica, request),
    ...(phased ? { phased: phasedSummary(strategy as PhasedExecutionData) } : {}),
  };
}

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** How {@link assignUnits} maps stages and units. */
interface UnitMapping {
  /** The stage of a forward node of the model (by its block), or undefined for other nodes. */
  forwardStage(node: Node): number | undefined;
  /** The stage of the block a node carries (a backward node carries its forward node's), if any. */
  blockStage(node: Node): number | undefined;
  /** The unit of a pass of a stage. */
  unitOf(pass: Pass, stage: number): number;
  /** The first stage of a unit. */
  firstStageOf(unit: number): number;
  lastForwardStage: number;
  /** Number of forward units (the backward units follow). */
  forwardUnits: number;
}

/**
 * The unit and stage of every node: forward model nodes by their block;
 * backward nodes with the stage of the forward node they differentiate (the
 * block it had when traced, else the stage the forward node got); the rest
 * (the loss, gradient sums) where their last input becomes available. A
 * forward node that needs a value of a later unit breaks the model's order.
 */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: one pass placing each node by the rule for its kind (forward, backward, the rest), with the order check
function assignUnits(graph: Graph, map: UnitMapping): { nodeUnits: number[]; nodeStages: number[] } {
  const units: number[] = new Array(graph.nodes.length).fill(-1);
  const stages: number[] = new Array(graph.nodes.length).fill(-1);
  const producer = (valueId: number): number => {
    const source = graph.values[valueId]!.source;
    return source.kind === 'node' ? source.node : -1;
  };
  for (const node of graph.nodes) {
    const producers = node.inputs.map(producer).filter((p) => p >= 0);
    const latest = producers.reduce((best, p) => (best < 0 || units[p]! > units[best]! ? p : best), -1);
    const earliest = latest < 0 ? -1 : units[latest]!;
    let stage = map.forwardStage(node);
    let unit = stage === undefined ? undefined : map.unitOf('forward', stage);
    if (unit !== undefined && earliest > unit) {
      const from = graph.nodes[latest]!;
      throw placementError(
        `${nodeWhere(node)} (block '${node.annotations.block ?? UNANNOTATED_BLOCK}') uses the output of ${nodeWhere(from)} ` +
          `(block '${from.annotations.block ?? UNANNOTATED_BLOCK}'), which is placed in a later stage; stages must follow the order the model runs`,
        node.annotations.block ?? '',
      );
    }
    const ofBlock = node.annotations.pass === 'backward' ? map.blockStage(node) : undefined;
    if (unit === undefined && (ofBlock !== undefined || (node.annotations.pass === 'backward' && node.annotations.gradOf !== undefined))) {
      const forwardStage = ofBlock ?? stages[node.annotations.gradOf!]!;
      stage = forwardStage >= 0 ? forwardStage : map.lastForwardStage;
      unit = map.unitOf('backward', stage);
      if (earliest > unit) {
        unit = earliest;
        stage = stages[latest]!;
      }
    }
    if (unit === undefined || stage === undefined) {
      const firstOfPass = node.annotations.pass === 'forward' ? 0 : map.forwardUnits;
      unit = Math.max(earliest, firstOfPass);
      stage = unit === earliest && latest >= 0 ? stages[latest]! : map.firstStageOf(unit);
    }
    units[node.id] = unit;
    stages[node.id] = stage;
  }
  return { nodeUnits: units, nodeStages: stages };
}
