/**
 * Convolution filters packed for the product routine of
 * batch_mat_mul_simd.ts: the filter `[taps · inChannels, outChannels]` laid
 * out in panels of 8 output channels, `[ceil(outChannels / 8), depth, 8]`,
 * so that a tile of the product reads its columns of B as one stream
 * instead of 32 bytes every row of the filter. With few output positions a
 * convolution is a pass over its filter, and the strided reads left the
 * product at half XNNPACK's speed, which packs its filters the same way
 * (2 × 2 × 512 → 512, 3 × 3: 0.82 against 0.31 ms).
 *
 * As XNNPACK's operators are, a packed filter is made at the first call
 * with a filter tensor and kept while that tensor lives: the wasm backend's
 * data never change under a data id (a weight update makes a new tensor),
 * and its `disposeData` is wrapped to free the packed copy with the filter.
 */
import type * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';

/** The columns of a panel of a packed filter. */
export const PANEL_COLUMNS = 8;

/**
 * The packed filters of one wasm backend, by the data id of the filter they were made from and its columns (reshapes
 * share their input's data id, so one data may be read as filters of several shapes).
 */
class PackedFilters {
  private readonly packed = new Map<tf.DataId, Map<number, tf.TensorInfo>>();

  constructor(private readonly wasm: BackendWasm) {
    const dispose = wasm.disposeData.bind(wasm);
    wasm.disposeData = (dataId: tf.DataId, force?: boolean): boolean => {
      const released = dispose(dataId, force);
      if (released) this.release(dataId);
      return released;
    };
  }

  /** The packed copy of `filter` (`[depth, cols]` float32 in the backend's memory), made now if it has none. */
  of(filter: tf.TensorInfo, depth: number, cols: number): tf.TensorInfo {
    let byColumns = this.packed.get(filter.dataId);
    const held = byColumns?.get(cols);
    if (held !== undefined) return held;
    const panels = Math.ceil(cols / PANEL_COLUMNS);
    const out = this.wasm.makeOutput([panels, depth, PANEL_COLUMNS], 'float32');
    const to = this.wasm.typedArrayFromHeap(out) as Float32Array;
    const from = this.wasm.typedArrayFromHeap(filter) as Float32Array;
    let at = 0;
    for (let p = 0; p < panels; p++) {
      const first = p * PANEL_COLUMNS;
      const width = Math.min(PANEL_COLUMNS, cols - first);
      for (let k = 0; k < depth; k++, at += PANEL_COLUMNS) {
        const row = k * cols + first;
        for (let c = 0; c < width; c++) to[at + c] = from[row + c]!;
        for (let c = width; c < PANEL_COLUMNS; c++) to[at + c] = 0;
      }
    }
    if (byColumns === undefined) {
      byColumns = new Map();
      this.packed.set(filter.dataId, byColumns);
    }
    byColumns.set(cols, out);
    return out;
  }

  private release(dataId: tf.DataId): void {
    const byColumns = this.packed.get(dataId);
    if (byColumns === undefined) return;
    this.packed.delete(dataId);
    for (const packed of byColumns.values()) this.wasm.disposeData(packed.dataId);
  }
}

const byBackend = new WeakMap<BackendWasm, PackedFilters>();

/**
 * The packed copy of the float32 filter `filter`, read as `[depth, cols]`
 * (`[taps · inChannels, outChannels]`), in panels of {@link PANEL_COLUMNS}
 * columns, the last one's columns beyond `cols` zeros. It lives as long as
 * `filter`'s data.
 */
export function packedFilter(wasm: BackendWasm, filter: tf.TensorInfo, depth: number, cols: number): tf.TensorInfo {
  let filters = byBackend.get(wasm);
  if (filters === undefined) {
    filters = new PackedFilters(wasm);
    byBackend.set(wasm, filters);
  }
  return filters.of(filter, depth, cols);
}
