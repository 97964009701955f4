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
 * As XNNPACK's operators are, a packed filter (or another copy made from a
 * filter: Winograd's transformed filters, winograd_convolution.ts) is made
 * at the first call with a filter tensor and kept while that tensor lives:
 * the wasm backend's data never change under a data id (a weight update
 * makes a new tensor), and its `disposeData` is wrapped to free the copies
 * with the filter.
 */
import type * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';

/** The columns of a panel of a packed filter. */
export const PANEL_COLUMNS = 8;

/**
 * Copies of filters made for the routines (packed, transformed), per wasm backend: by the data id of the filter they
 * were made from and a key naming the copy and the shape the filter was read as (reshapes share their input's data
 * id, so one data may be read as filters of several shapes).
 */
class FilterCopies {
  private readonly copies = new Map<tf.DataId, Map<string, tf.TensorInfo>>();
  /** What the copies held now take. */
  bytes = 0;

  constructor(private readonly wasm: BackendWasm) {
    const dispose = wasm.disposeData.bind(wasm);
    wasm.disposeData = (dataId: tf.DataId, force?: boolean): boolean => {
      const released = dispose(dataId, force);
      if (released) this.release(dataId);
      return released;
    };
  }

  /** The copy `key` of `filter`, made now by `make` if it has none. */
  of(filter: tf.TensorInfo, key: string, make: () => tf.TensorInfo): tf.TensorInfo {
    let byKey = this.copies.get(filter.dataId);
    const held = byKey?.get(key);
    if (held !== undefined) return held;
    const out = make();
    if (byKey === undefined) {
      byKey = new Map();
      this.copies.set(filter.dataId, byKey);
    }
    byKey.set(key, out);
    this.bytes += copyBytes(out);
    return out;
  }

  private release(dataId: tf.DataId): void {
    const byKey = this.copies.get(dataId);
    if (byKey === undefined) return;
    this.copies.delete(dataId);
    for (const copy of byKey.values()) {
      this.bytes -= copyBytes(copy);
      this.wasm.disposeData(copy.dataId);
    }
  }
}

/** The bytes of a float32 copy. */
const copyBytes = (copy: tf.TensorInfo): number => 4 * copy.shape.reduce((n, d) => n * d, 1);

const byBackend = new WeakMap<BackendWasm, FilterCopies>();

/**
 * The copy of `filter` named `key` (which must also name the shape the
 * filter is read as), made by `make` in the backend's memory at the first
 * call; it lives as long as `filter`'s data.
 */
export function filterCopy(wasm: BackendWasm, filter: tf.TensorInfo, key: string, make: () => tf.TensorInfo): tf.TensorInfo {
  let copies = byBackend.get(wasm);
  if (copies === undefined) {
    copies = new FilterCopies(wasm);
    byBackend.set(wasm, copies);
  }
  return copies.of(filter, key, make);
}

/**
 * The bytes the copies of filters made for the routines in `wasm`'s memory
 * take now: the wasm backend's tensors that tfjs does not count (the
 * engine's `numBytes` counts only the tensors it hands out).
 */
export function filterCopyBytes(wasm: BackendWasm): number {
  return byBackend.get(wasm)?.bytes ?? 0;
}

/** The panels of {@link PANEL_COLUMNS} columns a packed `[depth, cols]` matrix takes. */
export const packedPanels = (cols: number): number => Math.ceil(cols / PANEL_COLUMNS);

/**
 * Writes the `[depth, cols]` matrix at `from[fromAt]` to `to[toAt]` packed
 * in panels of {@link PANEL_COLUMNS} columns, `[ceil(cols / 8), depth, 8]`,
 * the last one's columns beyond `cols` zeros.
 */
export function packColumns(from: Float32Array, fromAt: number, depth: number, cols: number, to: Float32Array, toAt: number): void {
  let at = toAt;
  for (let p = 0; p < packedPanels(cols); p++) {
    const first = p * PANEL_COLUMNS;
    const width = Math.min(PANEL_COLUMNS, cols - first);
    for (let k = 0; k < depth; k++, at += PANEL_COLUMNS) {
      const row = fromAt + k * cols + first;
      for (let c = 0; c < width; c++) to[at + c] = from[row + c]!;
      for (let c = width; c < PANEL_COLUMNS; c++) to[at + c] = 0;
    }
  }
}

/** A copy of a filter: the key it is held under with its filter's data, and its shape (float32). */
export interface FilterCopyShape {
  readonly key: string;
  readonly shape: readonly number[];
}

/** The copy {@link packedFilter} makes of a filter read as `[depth, cols]`. */
export function packedFilterCopy(depth: number, cols: number): FilterCopyShape {
  return { key: `packed ${cols}`, shape: [packedPanels(cols), depth, PANEL_COLUMNS] };
}

/**
 * The packed copy of the float32 filter `filter`, read as `[depth, cols]`
 * (`[taps · inChannels, outChannels]`), in panels of {@link PANEL_COLUMNS}
 * columns, the last one's columns beyond `cols` zeros. It lives as long as
 * `filter`'s data.
 */
export function packedFilter(wasm: BackendWasm, filter: tf.TensorInfo, depth: number, cols: number): tf.TensorInfo {
  const { key, shape } = packedFilterCopy(depth, cols);
  return filterCopy(wasm, filter, key, () => {
    const out = wasm.makeOutput([...shape], 'float32');
    packColumns(wasm.typedArrayFromHeap(filter) as Float32Array, 0, depth, cols, wasm.typedArrayFromHeap(out) as Float32Array, 0);
    return out;
  });
}
