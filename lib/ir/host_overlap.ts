/**
 * Host I/O overlapped with compute: PopTorch's `OverlapMode`
 * (python/enums.py), set on a model's inputs and outputs with
 * `ops.setOverlapForInput` / `ops.setOverlapForOutput`, and kept on the graph
 * by the position of each marked input and output.
 *
 * PopTorch passes the mode to PopART as the tensor's tile set and exchange
 * strategy (popart_compiler/source/Compiler.cpp, `exchangeStrToPopartEnum`):
 * `NoOverlap` is `TileSet::Compute` with `ExchangeStrategy::JustInTime`,
 * `OverlapAccumulationLoop` is `TileSet::IO` with `OverlapInnerLoop` and
 * `OverlapDeviceIterationLoop` is `TileSet::IO` with `OverlapLoops`.
 */

/** How far a host transfer overlaps compute (PopTorch's `poptorch.OverlapMode`). */
export const OverlapMode = {
  /** The host copies the tensor when it is needed, through the compute tiles (PopART's `JustInTime`). */
  NoOverlap: 'NoOverlap',
  /** The I/O tiles load the next gradient-accumulation iteration's value while the compute tiles work (PopART's `OverlapInnerLoop`). */
  OverlapAccumulationLoop: 'OverlapAccumulationLoop',
  /** As `OverlapAccumulationLoop`, and across device iterations too (PopART's `OverlapLoops`). */
  OverlapDeviceIterationLoop: 'OverlapDeviceIterationLoop',
} as const;
/** A member of {@link OverlapMode}. */
export type OverlapMode = (typeof OverlapMode)[keyof typeof OverlapMode];

/** The modes that overlap: a transfer marked `NoOverlap` carries no mark. */
export type OverlappingMode = Exclude<OverlapMode, 'NoOverlap'>;

/** One model input or output whose host transfer overlaps compute. */
export interface HostOverlapMark {
  /** A model input (by its position in the graph's inputs), a model output (by its position in the outputs) or the loss (position 0). */
  readonly of: 'input' | 'output' | 'loss';
  readonly index: number;
  readonly mode: OverlappingMode;
}

/** True if `mode` is one of {@link OverlapMode}'s. */
export function isOverlapMode(mode: unknown): mode is OverlapMode {
  return typeof mode === 'string' && Object.values<string>(OverlapMode).includes(mode);
}
