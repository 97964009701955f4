/**
 * The batching arithmetic of one call: a host batch is split into
 * micro-batches, `deviceIterations × (replicationFactor / inputGroupSize) ×
 * gradientAccumulation` of them (no accumulation factor for inference).
 * Micro-batch `(d, g, r)` holds host samples
 * `[((d·GA + g)·R' + r)·micro, ... + micro)` where `R' = replicationFactor / inputGroupSize`.
 */
import { PoptfjsError } from '../common/errors.js';
import type { CommGroupType } from '../option_vocabulary/enums.js';
import { groupOfReplica, replicaGroups } from './replica_grouping.js';

/** The factors of the batching arithmetic. */
export interface BatchFactors {
  readonly deviceIterations: number;
  readonly replicationFactor: number;
  /** Replicas per input group: replicas of one group see the same data. */
  readonly inputGroupSize: number;
  /** How replicas are grouped for inputs. */
  readonly inputGroupType: CommGroupType;
  /** Gradient accumulation steps (1 for inference). */
  readonly gradientAccumulation: number;
}

/** Distinct micro-batches one call consumes. */
export function microBatchesPerCall(f: BatchFactors): number {
  return f.deviceIterations * (f.replicationFactor / f.inputGroupSize) * f.gradientAccumulation;
}

/** The arithmetic as text, e.g. `microBatch × deviceIterations(4) × (replicationFactor(2) / inputGroupSize(1)) × gradientAccumulation(1)`. */
export function batchFormula(f: BatchFactors, microBatch?: number): string {
  const terms = [
    microBatch === undefined ? 'microBatch' : `microBatch(${microBatch})`,
    `deviceIterations(${f.deviceIterations})`,
    `(replicationFactor(${f.replicationFactor}) / inputGroupSize(${f.inputGroupSize}))`,
    `gradientAccumulation(${f.gradientAccumulation})`,
  ];
  return terms.join(' × ');
}

/** Checks the factors themselves (replication divisible by the input group size). */
export function checkBatchFactors(f: BatchFactors): void {
  if (f.replicationFactor % f.inputGroupSize !== 0) {
    throw new PoptfjsError(`replicationFactor(${f.replicationFactor}) must be a multiple of the input replica group size (${f.inputGroupSize})`, { type: 'batching' });
  }
}

/**
 * The micro-batch size for a host batch of `hostBatch` samples; an error that
 * spells out the arithmetic if it does not divide.
 */
export function microBatchSize(f: BatchFactors, hostBatch: number): number {
  checkBatchFactors(f);
  const per = microBatchesPerCall(f);
  if (hostBatch < per || hostBatch % per !== 0) {
    throw new PoptfjsError(
      `a host batch of ${hostBatch} samples cannot be split into micro-batches: one call consumes ` +
        `${batchFormula(f)} = microBatch × ${per} samples, and ${hostBatch} is not a positive multiple of ${per}`,
      { type: 'batching' },
    );
  }
  return hostBatch / per;
}

/** The host batch size one call must be given once the micro-batch size is known. */
export function hostBatchSize(f: BatchFactors, microBatch: number): number {
  return microBatch * microBatchesPerCall(f);
}

/** The index of the distinct input micro-batch that replica `replica` reads. */
export function inputGroupOf(f: BatchFactors, replica: number): number {
  const groups = replicaGroups(f.inputGroupType, f.inputGroupSize, f.replicationFactor);
  return groupOfReplica(groups, f.replicationFactor)[replica]!;
}

/** The index, among the call's micro-batches, of the input of micro-step `(d, g)` on `replica`. */
export function microBatchIndex(f: BatchFactors, d: number, g: number, replica: number): number {
  const groups = f.replicationFactor / f.inputGroupSize;
  return (d * f.gradientAccumulation + g) * groups + inputGroupOf(f, replica);
}
