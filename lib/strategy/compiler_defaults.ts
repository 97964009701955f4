/**
 * What PopTorch's compiler and PopART choose for a model when the user did
 * not: the values poptfjs compiles with in their place.
 *
 * PopTorch's compiler sets these with `setOptionIfNotSet` when it creates the
 * PopART session (graphcore/poptorch popart_compiler/source/Compiler.cpp,
 * `Compiler::initSession`), so a value the user set always wins:
 * - pipelined over more than one IPU: `autoRecomputation` is `Pipeline`
 *   ("If we are pipelining we want to turn on recompute by default");
 * - pipelined with gradient clipping (an optimizer's `maxGradNorm`): the
 *   weight update after the accumulation loop (PopART's accumulate outer
 *   fragment) is scheduled freely over the IPUs
 *   (`AccumulateOuterFragmentSchedule::Scheduler`); otherwise it keeps
 *   PopART's default, `Serial`: the IPUs update their weights one after
 *   another, in IPU order (graphcore/popart
 *   willow/include/popart/sessionoptions.hpp, `AccumulateOuterFragmentSettings`);
 * - phased execution: activations, weights, optimizer state and accumulators
 *   live off chip (`useOnChipStorage(False)` for each kind whose storage the
 *   user did not choose).
 */
import type { TensorLocationData, TensorLocationsSettings } from '../option_vocabulary/tensor_location_settings.js';
import type { Placement } from './placement.js';
import type { RecomputationType } from './recomputation.js';

/** How the weight updates after gradient accumulation are ordered over a replica's IPUs. */
export type WeightUpdateSchedule = 'Serial' | 'Scheduler';

/** What the user chose, for the values PopTorch defaults. */
export interface UserChoices {
  /** `Options.autoRecomputation`; absent: not set. */
  readonly autoRecomputation?: RecomputationType;
  /** `Options.TensorLocations`; a kind whose `useOnChipStorage` is absent has no storage chosen. */
  readonly tensorLocations: TensorLocationsSettings;
  /** Whether the optimizer clips gradients (a finite `maxGradNorm`). */
  readonly clipsGradients: boolean;
  /** Gradient accumulation steps (the accumulate outer fragment exists above 1). */
  readonly gradientAccumulation: number;
}

/** The values a model compiles with. */
export interface CompilerChoices {
  readonly recomputation: RecomputationType;
  readonly tensorLocations: TensorLocationsSettings;
  readonly weightUpdateSchedule: WeightUpdateSchedule;
}

const TENSOR_KINDS = ['activation', 'weight', 'optimizer', 'accumulator'] as const;

function offChipUnlessChosen(location: TensorLocationData): TensorLocationData {
  return location.useOnChipStorage === undefined ? { ...location, useOnChipStorage: false } : location;
}

/** The values `placement` compiles with, PopTorch's defaults filling what `choices` leaves unset. */
export function compilerChoices(choices: UserChoices, placement: Placement): CompilerChoices {
  const pipelined = placement.strategy === 'PipelinedExecution';
  const pipelinedOverIpus = pipelined && placement.ipusPerReplica > 1;
  const phased = placement.phased !== undefined;
  const locations = choices.tensorLocations;
  return {
    recomputation: choices.autoRecomputation ?? (pipelinedOverIpus ? 'Pipeline' : 'None'),
    tensorLocations: phased ? { ...locations, ...Object.fromEntries(TENSOR_KINDS.map((kind) => [kind, offChipUnlessChosen(locations[kind])])) } : locations,
    weightUpdateSchedule: choices.gradientAccumulation > 1 && !(pipelined && choices.clipsGradients) ? 'Serial' : 'Scheduler',
  };
}
