/**
 * The taps of a 2-D pooling's windows as whole tensors, for the average
 * pooling gradient: each tap's gradient added back onto the input.
 *
 * Window `(oy, ox)` of a pooling with a `fh×fw` filter, `sh×sw` strides and
 * `top`/`left` padding reads input row `oy·sh - top + i` and column
 * `ox·sw - left + j` at its tap `(i, j)`. To write the taps' gradients
 * back, cut the input, seen from row `-top` and column `-left` on (the
 * canvas, cropped or padded to whole tiles), into `sh×sw` tiles. Tap
 * `(i, j)` of window `(oy, ox)` is element `(i mod sh, j mod sw)` (its
 * phase) of tile `(oy + ⌊i/sh⌋, ox + ⌊j/sw⌋)`. Each tap's gradient is added
 * into its phase at its tile offset, the `sh·sw` phases are concatenated and
 * transposed back onto the canvas (two transposes of rank 3 and 4, the wasm
 * backend's fast ones), and the canvas's input part is the input gradient.
 *
 * Nothing loops over elements in JavaScript: a `Slice` (the wasm one copies
 * in JavaScript) only crops whole row segments, where the padding or the
 * tiles do not match the input.
 */
import * as tf from '@tensorflow/tfjs';
import type { KernelCallScope } from './kernel_call_scope.js';
import { padOrCrop, padToExtent, type AxisPadding } from './window_padding.js';

/** Where a tap of every window is read: its phase and its offset in tiles. */
interface Tap {
  /** The phase, `(i mod sh)·sw + (j mod sw)`. */
  readonly phase: number;
  /** `⌊i/sh⌋`: the tile row of the tap relative to its window's. */
  readonly tileRow: number;
  /** `⌊j/sw⌋`: the tile column of the tap relative to its window's. */
  readonly tileCol: number;
}

const inverse = ({ before, after }: AxisPadding): AxisPadding => ({ before: -before, after: -after });

/** The taps of the windows of one pooling, for one run of a pooling-gradient kernel. */
export class PoolWindowTaps {
  /** Every tap, in the row-major order of the window (`i`, then `j`). */
  private readonly taps: readonly Tap[];
  private readonly strideHeight: number;
  private readonly strideWidth: number;
  /** Tiles a window spans down and across. */
  private readonly tileSpan: readonly [number, number];
  /** `[batch, tileRows, tileCols, channels]`: the shape of one phase. */
  private readonly phaseShape: readonly [number, number, number, number];
  /** From the input to the canvas (the inverse takes the canvas back to the input). */
  private readonly rows: AxisPadding;
  private readonly cols: AxisPadding;

  /** The taps of `info`'s windows (a pooling without dilation), whose tensors live in `scope`. */
  constructor(
    private readonly scope: KernelCallScope,
    info: tf.backend_util.Conv2DInfo,
  ) {
    const { strideHeight, strideWidth, filterHeight, filterWidth } = info;
    this.strideHeight = strideHeight;
    this.strideWidth = strideWidth;
    const taps: Tap[] = [];
    for (let i = 0; i < filterHeight; i++) {
      for (let j = 0; j < filterWidth; j++) {
        taps.push({ phase: (i % strideHeight) * strideWidth + (j % strideWidth), tileRow: Math.floor(i / strideHeight), tileCol: Math.floor(j / strideWidth) });
      }
    }
    this.taps = taps;
    this.tileSpan = [Math.ceil(filterHeight / strideHeight), Math.ceil(filterWidth / strideWidth)];
    const tileRows = info.outHeight + this.tileSpan[0] - 1;
    const tileCols = info.outWidth + this.tileSpan[1] - 1;
    this.phaseShape = [info.batchSize, tileRows, tileCols, info.inChannels];
    this.rows = padToExtent(info.inHeight, info.padInfo.top, tileRows * strideHeight);
    this.cols = padToExtent(info.inWidth, info.padInfo.left, tileCols * strideWidth);
  }

  /** How many taps a window has. */
  get count(): number {
    return this.taps.length;
  }

  /**
   * The input gradient: `perTap[t]` (`[batch, outHeight, outWidth,
   * channels]`, the gradient reaching tap `t` of every window) added into
   * the input element each tap reads; elements no tap reads get zero.
   */
  gradient(perTap: readonly tf.TensorInfo[]): tf.TensorInfo {
    const k = this.scope;
    const [batch, tileRows, tileCols, channels] = this.phaseShape;
    const [spanRows, spanCols] = this.tileSpan;
    const phaseGradients = Array.from({ length: this.strideHeight * this.strideWidth }, (_, p) => {
      const parts = this.taps.flatMap((tap, t) => {
        if (tap.phase !== p) return [];
        if (spanRows === 1 && spanCols === 1) return [perTap[t]!];
        const paddings = [
          [0, 0],
          [tap.tileRow, spanRows - 1 - tap.tileRow],
          [tap.tileCol, spanCols - 1 - tap.tileCol],
          [0, 0],
        ];
        return [k.call(tf.PadV2, { x: perTap[t]! }, { paddings, constantValue: 0 })];
      });
      if (parts.length === 0) return k.call(tf.Fill, {}, { shape: [...this.phaseShape], value: 0, dtype: 'float32' });
      return parts.length === 1 ? parts[0]! : k.call(tf.AddN, parts);
    });
    const { strideHeight, strideWidth } = this;
    const size = batch * tileRows * tileCols * channels;
    const stacked =
      phaseGradients.length === 1
        ? phaseGradients[0]!
        : k.call(
            tf.Concat,
            phaseGradients.map((g) => k.reshape(g, [1, size])),
            { axis: 0 },
          );
    // [sh·sw, batch·tileRows, tileCols·channels] → [batch·tileRows·sh, sw, tileCols, channels] → [batch·tileRows·sh, tileCols, sw, channels]
    const phasesInTileRows = k.transpose(k.reshape(stacked, [strideHeight * strideWidth, batch * tileRows, tileCols * channels]), [1, 0, 2]);
    const phasesInTiles = k.transpose(k.reshape(phasesInTileRows, [batch * tileRows * strideHeight, strideWidth, tileCols, channels]), [0, 2, 1, 3]);
    const canvas = k.reshape(phasesInTiles, [batch, tileRows * strideHeight, tileCols * strideWidth, channels]);
    return padOrCrop(k, canvas, inverse(this.rows), inverse(this.cols), 0);
  }
}
