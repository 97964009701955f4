/**
 * Collects the outputs of every micro-step of a call and combines them as
 * the output mode says (PopTorch's `OutputMode`):
 * - `All`: every micro-step's output, concatenated in host-batch order;
 * - `Final`: the last micro-step's output (one per replica);
 * - `Sum`: the sum over device iterations and accumulation steps (one per replica);
 * - `EveryN`: the outputs of every N-th device iteration.
 * Outputs with a batch dimension are concatenated along it; scalars (the loss)
 * are stacked. Tensors that the mode does not return are disposed as soon as
 * they arrive.
 */
import * as tf from '@tensorflow/tfjs';
import type { BatchFactors } from '../executable/batch_plan.js';
import type { ResolvedOutputMode } from '../executable/output_mode.js';

function join(parts: tf.Tensor[]): tf.Tensor {
  if (parts.length === 1) return parts[0]!;
  const joined = parts[0]!.rank === 0 ? tf.stack(parts) : tf.concat(parts, 0);
  tf.dispose(parts);
  return joined;
}

/** Combines per-micro-step outputs of one call. */
export class OutputCollector {
  /**
   * Kept tensors per output, by their position in the host batch
   * (`(d·GA + g)·R + replica`) for All, EveryN and Final, or by replica for Sum.
   */
  private readonly kept: tf.Tensor[][];

  constructor(
    private readonly mode: ResolvedOutputMode,
    private readonly period: number,
    private readonly factors: BatchFactors,
    outputCount: number,
  ) {
    this.kept = Array.from({ length: outputCount }, () => []);
  }

  /** Hands over the outputs of micro-step `(d, g)` on `replica`; the collector owns them. */
  add(d: number, g: number, replica: number, outputs: readonly tf.Tensor[]): void {
    const { deviceIterations, gradientAccumulation, replicationFactor } = this.factors;
    const position = (d * gradientAccumulation + g) * replicationFactor + replica;
    outputs.forEach((t, i) => {
      const kept = this.kept[i]!;
      switch (this.mode) {
        case 'All':
          kept[position] = t;
          break;
        case 'EveryN':
          if ((d + 1) % this.period === 0) kept[position] = t;
          else t.dispose();
          break;
        case 'Final':
          if (d === deviceIterations - 1 && g === gradientAccumulation - 1) kept[replica] = t;
          else t.dispose();
          break;
        case 'Sum': {
          const previous = kept[replica];
          if (previous) {
            kept[replica] = tf.add(previous, t);
            previous.dispose();
            t.dispose();
          } else {
            kept[replica] = t;
          }
          break;
        }
      }
    });
  }

  /** The combined outputs in host-batch order; the caller owns them. */
  finish(): tf.Tensor[] {
    return this.kept.map((parts) => join(parts.filter((t) => t !== undefined)));
  }

  /** Disposes whatever was collected (after a failed call). */
  dispose(): void {
    for (const parts of this.kept) tf.dispose(parts.filter((t) => t !== undefined));
  }
}
