/**
 * Why a search's best configuration wins, in words: how much faster it is
 * than the next best and in which choices they differ, and which of its
 * neighbours (one choice changed) that might have been faster do not fit.
 */
import { formatBytes } from '../ipu/byte_size.js';
import type { Candidate, CandidateChoices } from './search_candidate.js';

/** The choices two configurations make differently, each as `name: a → b`. */
export function choiceDifferences(a: CandidateChoices, b: CandidateChoices): string[] {
  const differences: string[] = [];
  const compare = (name: string, x: unknown, y: unknown, text: (v: unknown) => string = String) => {
    if (JSON.stringify(x) !== JSON.stringify(y)) differences.push(`${name} ${text(x)} → ${text(y)}`);
  };
  compare('IPUs a replica', a.ipusPerReplica, b.ipusPerReplica);
  compare('micro-batch', a.microBatch, b.microBatch);
  compare('device iterations', a.deviceIterations, b.deviceIterations);
  compare('recomputation', a.recomputation, b.recomputation);
  compare('optimizer state', a.optimizerState, b.optimizerState);
  compare('memory proportions', a.availableMemoryProportion, b.availableMemoryProportion, (v) => `[${(v as number[]).join(', ')}]`);
  if (a.ipusPerReplica === b.ipusPerReplica) {
    compare('stages', a.split.stages, b.split.stages, (v) => `[${(v as string[][]).map((s) => s.length).join(',')}]`);
    compare('stage IPUs', a.split.ipus, b.split.ipus, (v) => `[${(v as number[]).join(',')}]`);
  }
  return differences;
}

/** The reasons `best` wins among the `candidates` that fit, and what of the `rejected` would have been faster. */
export function searchReasons(best: Candidate | undefined, candidates: readonly Candidate[], rejected: readonly Candidate[]): string {
  if (!best) {
    const closest = rejected[0];
    return closest
      ? `No configuration fits. The closest, ${closest.describe()}, needs ${formatBytes(closest.fullest.used)} on IPU ${closest.fullest.ipu} of its ${formatBytes(closest.fullest.capacity)}: more IPUs, a smaller global batch or a smaller model would help.`
      : 'No configuration was planned: the space has no micro-batch that divides the global batch with the accumulation a pipeline needs.';
  }
  const lines = [`Why it wins: ${best.throughput.toFixed(1)} samples/s, the fastest of the ${candidates.length} configuration(s) that fit.`];
  const next = candidates.find((c) => c !== best && choiceDifferences(best, c).length > 0);
  if (next) {
    const gain = (100 * (best.throughput / next.throughput - 1)).toFixed(1);
    lines.push(`  The next best, ${next.throughput.toFixed(1)} samples/s (${gain}% slower), differs in: ${choiceDifferences(best, next).join('; ')}.`);
  }
  const share = (c: Candidate) => `${formatBytes(c.fullest.used)} on IPU ${c.fullest.ipu}, ${(100 * (c.fullest.used / c.fullest.capacity)).toFixed(0)}% of it`;
  lines.push(`  Its fullest IPU holds ${share(best)}.`);
  // What would have been faster: the configurations planned faster than the best that do not fit, the closest to it first.
  const faster = rejected
    .filter((c) => c.throughput > best.throughput)
    .map((c) => ({ c, differences: choiceDifferences(best, c) }))
    .sort((a, b) => a.differences.length - b.differences.length || b.c.throughput - a.c.throughput);
  for (const { c, differences } of faster.slice(0, 4)) {
    lines.push(`  Not faster because it does not fit: ${differences.join('; ')} (${c.throughput.toFixed(1)} samples/s) needs ${share(c)}.`);
  }
  if (faster.length === 0) lines.push('  No configuration planned faster was left out for memory: the space has nothing faster.');
  return lines.join('\n');
}
