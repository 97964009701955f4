/**
 * The enumerations of PopART's session options, as string-valued constant
 * objects: each is both a value (`VirtualGraphMode.Manual`) and a type (the
 * union of its values), so options can be written as members or strings.
 */

/** How operations are placed on IPUs (PopART's `VirtualGraphMode`). */
export const VirtualGraphMode = {
  /** Everything on one IPU. */
  Off: 'Off',
  /** Each operation on the IPU its `__ipu_number` attribute names (`Builder.virtualGraph`). */
  Manual: 'Manual',
  /** The graph split into consecutive parts of about equal work, one per IPU of a replica. */
  Auto: 'Auto',
  /** Operations in the execution phases their `__execution_phase` attribute names (`Builder.executionPhase`). */
  ExecutionPhases: 'ExecutionPhases',
} as const;
/** A member of {@link VirtualGraphMode}. */
export type VirtualGraphMode = (typeof VirtualGraphMode)[keyof typeof VirtualGraphMode];

/** Which activations are recomputed in the backward pass instead of stored (PopART's `RecomputationType`). */
export { RecomputationType } from '../strategy/recomputation.js';

/** How Adam computes its update (PopART's `AdamMode`). */
export const AdamMode = {
  /** Adam (AdamW with `WeightDecayMode.Decay`), with bias correction. */
  Adam: 'Adam',
  /** Adam without bias correction. */
  AdamNoBias: 'AdamNoBias',
  /** AdaMax. */
  AdaMax: 'AdaMax',
  /** LAMB, with bias correction. */
  Lamb: 'Lamb',
  /** LAMB without bias correction. */
  LambNoBias: 'LambNoBias',
} as const;
/** A member of {@link AdamMode}. */
export type AdamMode = (typeof AdamMode)[keyof typeof AdamMode];

/** Which adaptive optimizer `Adaptive` is (PopART's `AdaptiveMode`). */
export const AdaptiveMode = {
  /** AdaGrad. */
  AdaGrad: 'AdaGrad',
  /** RMSProp. */
  RMSProp: 'RMSProp',
  /** RMSProp normalised by an estimate of the gradient's variance. */
  CenteredRMSProp: 'CenteredRMSProp',
  /** AdaDelta. */
  AdaDelta: 'AdaDelta',
} as const;
/** A member of {@link AdaptiveMode}. */
export type AdaptiveMode = (typeof AdaptiveMode)[keyof typeof AdaptiveMode];

/** How weight decay enters an update (PopART's `WeightDecayMode`). */
export const WeightDecayMode = {
  /** Decoupled: `w -= lr · (update + wd · w)`. */
  Decay: 'Decay',
  /** An L2 penalty added to the gradient: `g += wd · w`. */
  L2Regularization: 'L2Regularization',
} as const;
/** A member of {@link WeightDecayMode}. */
export type WeightDecayMode = (typeof WeightDecayMode)[keyof typeof WeightDecayMode];

/** How SGD keeps its gradient accumulator and momentum (PopART's `SGDAccumulatorAndMomentum`). */
export const SGDAccumulatorAndMomentum = {
  /** One tensor holds both (less memory). */
  Combined: 'Combined',
  /** Separate tensors. */
  Separate: 'Separate',
} as const;
/** A member of {@link SGDAccumulatorAndMomentum}. */
export type SGDAccumulatorAndMomentum = (typeof SGDAccumulatorAndMomentum)[keyof typeof SGDAccumulatorAndMomentum];
