/**
 * Axis arguments of ONNX operators: negative axes count from the end.
 */
import { OnnxError } from '../proto/onnx_errors.js';

/** `axis` in [0, rank), from an ONNX axis in [-rank, rank). */
export function normalizeAxis(axis: number, rank: number, where: string): number {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= Math.max(rank, 1)) {
    throw new OnnxError(`${where}: axis ${axis} is out of range for a tensor of rank ${rank}`, { location: where });
  }
  return a;
}

/** Each axis normalized by {@link normalizeAxis}. */
export function normalizeAxes(axes: readonly number[], rank: number, where: string): number[] {
  return axes.map((a) => normalizeAxis(a, rank, where));
}

/** The axes 0..rank-1. */
export function allAxes(rank: number): number[] {
  return Array.from({ length: rank }, (_, i) => i);
}
