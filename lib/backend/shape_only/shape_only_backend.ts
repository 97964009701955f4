/**
 * A tfjs backend whose tensors have shapes and dtypes but no data.
 *
 * Every data id records what the engine and the error messages need: dtype,
 * shape, byte size, reference count and where the tensor came from (the
 * kernel that made it, or a write from the host). Values written from the
 * host are kept only for small tensors (at most
 * {@link SHAPE_ONLY_MAX_KEPT_ELEMENTS} elements: scalars, shapes, indices),
 * so a kernel whose output shape depends on such values can still be planned
 * and the host can read them back. Larger written values are dropped at once,
 * so building a model larger than the host's memory keeps the host's memory
 * small; what is kept of them is the one value of a fill, which reads back
 * whole. Random draws and the initial values of layers' weights are never
 * computed while planning (see `value_free_creation`): they are described
 * here by shape and dtype with where they came from, as kernel outputs are.
 * Reading a tensor without values throws a {@link ShapeOnlyError} that names
 * what made it.
 */
import * as tf from '@tensorflow/tfjs';
import { engine } from '../tfjs_internals.js';
import type { KnownValuesLookup, OutputSpec } from './rules/kernel_shape_rule.js';
import { SHAPE_ONLY_REMEDY, ShapeOnlyError } from './rules/shape_only_error.js';

/**
 * The most elements a tensor written to the shape-only backend may have for
 * its values to be kept (1024: 4 KiB of float32). Larger written values are
 * dropped.
 */
export const SHAPE_ONLY_MAX_KEPT_ELEMENTS = 1024;

/** The one value a numeric array repeats (a fill), or undefined. */
export function repeatedValue(values: tf.BackendValues): number | undefined {
  if (!ArrayBuffer.isView(values) || values.length === 0) return undefined;
  const numbers = values as tf.TypedArray;
  const first = numbers[0]!;
  for (let i = 1; i < numbers.length; i++) if (numbers[i] !== first && !(Number.isNaN(first) && Number.isNaN(numbers[i]!))) return undefined;
  return first;
}

/**
 * Where a tensor made without values came from: a random draw of a tfjs op
 * (`op`, e.g. `tf.randomNormal`), or the initial value of a layer's weight.
 */
export type ValueFreeOrigin = { readonly kind: 'drawn'; readonly op: string } | { readonly kind: 'initial'; readonly weight: string; readonly layer: string };

/** Where a tensor of the shape-only backend came from. */
type TensorOrigin = { readonly kind: 'kernel'; readonly kernelName: string } | { readonly kind: 'written' } | { readonly kind: 'moved' } | ValueFreeOrigin;

/** What the shape-only backend holds for one data id. */
interface TensorRecord {
  readonly shape: readonly number[];
  readonly dtype: tf.DataType;
  /** Bytes the tensor would take with its values (string tensors: the bytes written, 0 for kernel outputs). */
  readonly bytes: number;
  /** The values, for small written tensors only. */
  readonly values: tf.BackendValues | undefined;
  /** A larger written numeric tensor that holds one value repeated (a fill): that value. */
  readonly fill?: number;
  readonly origin: TensorOrigin;
  refCount: number;
}

function elementCount(shape: readonly number[]): number {
  return tf.util.sizeFromShape([...shape]);
}

function byteSize(shape: readonly number[], dtype: tf.DataType, values: tf.BackendValues | undefined): number {
  if (dtype !== 'string') return elementCount(shape) * tf.util.bytesPerElement(dtype);
  return values === undefined ? 0 : (values as Uint8Array[]).reduce((sum, bytes) => sum + bytes.length, 0);
}

/** Bytes of the values the host holds for `values`. */
function hostBytes(values: tf.BackendValues | undefined): number {
  if (values === undefined) return 0;
  if (ArrayBuffer.isView(values)) return values.byteLength;
  return (values as Uint8Array[]).reduce((sum, bytes) => sum + bytes.length, 0);
}

function describeShape(shape: readonly number[], dtype: tf.DataType): string {
  return `a tensor of shape [${shape.join(',')}] (${dtype})`;
}

/**
 * The shape-only backend: tensors with shapes and dtypes, kernels that only
 * infer output shapes (registered by `registerShapeOnlyBackend`, used through
 * `withShapeOnlyBackend`).
 */
export class ShapeOnlyBackend extends tf.KernelBackend {
  private records = new WeakMap<tf.DataId, TensorRecord>();
  private dataIdCount = 0;
  private bytesDescribed = 0;
  private bytesOnHost = 0;

  /** Records a tensor written from the host; keeps `values` only for a small tensor. */
  override write(values: tf.BackendValues, shape: number[], dtype: tf.DataType): tf.DataId {
    const dataId = {};
    this.store(dataId, values, shape, dtype, { kind: 'written' }, 1);
    return dataId;
  }

  /** Takes over a tensor from another backend (the engine's data move); keeps `values` only for a small tensor. */
  override move(dataId: tf.DataId, values: tf.BackendValues, shape: number[], dtype: tf.DataType, refCount: number): void {
    this.store(dataId, values, shape, dtype, { kind: 'moved' }, refCount);
  }

  /** A new kernel output of the given shape and dtype, made by `kernelName`, without values. */
  makeOutput(spec: OutputSpec, kernelName: string): tf.TensorInfo {
    return this.makeWithoutValues(spec, { kind: 'kernel', kernelName });
  }

  /** A new tensor of the given shape and dtype that tfjs would have computed on the host (a random draw, a weight's initial value), without values. */
  makeValueFree(spec: OutputSpec, origin: ValueFreeOrigin): tf.TensorInfo {
    return this.makeWithoutValues(spec, origin);
  }

  /**
   * The values of `input` when the host has them: a small tensor written to
   * this backend, or a small tensor of another backend (read from it).
   */
  readonly knownValues: KnownValuesLookup = (input) => {
    const record = this.records.get(input.dataId);
    if (record !== undefined) return record.values;
    if (elementCount(input.shape) > SHAPE_ONLY_MAX_KEPT_ELEMENTS) return undefined;
    const owner = engine().state.tensorInfo.get(input.dataId)?.backend;
    return owner === undefined || owner === this ? undefined : owner.readSync(input.dataId);
  };

  /** The values of a small written tensor; throws a {@link ShapeOnlyError} for any other tensor. */
  override readSync(dataId: tf.DataId): tf.BackendValues {
    const record = this.records.get(dataId);
    if (record === undefined) {
      throw new ShapeOnlyError(`poptfjs is planning with shapes only and a tensor the shape-only backend does not know was read; ${SHAPE_ONLY_REMEDY}`, 'read');
    }
    if (record.values !== undefined) return record.values;
    if (record.fill !== undefined) return tf.util.getTypedArrayFromDType(record.dtype as 'float32', elementCount(record.shape)).fill(record.fill);
    throw this.valuesNotHeld(record);
  }

  /** As {@link readSync}. */
  override async read(dataId: tf.DataId): Promise<tf.BackendValues> {
    return this.readSync(dataId);
  }

  /** Always throws: the backend has no data to hand to a GPU. */
  override readToGPU(dataId: tf.DataId): tf.GPUData {
    const record = this.records.get(dataId);
    const what = record === undefined ? 'a tensor' : describeShape(record.shape, record.dtype);
    throw new ShapeOnlyError(`poptfjs is planning with shapes only: ${what} was read to a GPU, and the shape-only backend holds no data; ${SHAPE_ONLY_REMEDY}`, 'readToGPU');
  }

  /** Always throws: tensors of the shape-only backend cannot wrap GPU data. */
  override createTensorFromGPUData(): tf.Tensor {
    throw new ShapeOnlyError(
      `poptfjs is planning with shapes only: tensors cannot be made from GPU data on the shape-only backend; ${SHAPE_ONLY_REMEDY}`,
      'createTensorFromGPUData',
    );
  }

  /** Drops one reference to `dataId` (all of them with `force`); returns true once the data id is gone. */
  override disposeData(dataId: tf.DataId, force = false): boolean {
    const record = this.records.get(dataId);
    if (record === undefined) return true;
    record.refCount--;
    if (!force && record.refCount > 0) return false;
    this.records.delete(dataId);
    this.dataIdCount--;
    this.bytesDescribed -= record.bytes;
    this.bytesOnHost -= hostBytes(record.values);
    return true;
  }

  /** Adds a reference to `dataId`; a data id of another backend (a variable made from its tensor) is counted there. */
  override incRef(dataId: tf.DataId): void {
    const record = this.records.get(dataId);
    if (record !== undefined) {
      record.refCount++;
      return;
    }
    const owner = engine().state.tensorInfo.get(dataId)?.backend;
    if (owner !== undefined && owner !== this) owner.incRef(dataId);
  }

  /** The references to `dataId`, 0 when this backend does not hold it. */
  override refCount(dataId: tf.DataId): number {
    return this.records.get(dataId)?.refCount ?? 0;
  }

  /** The data ids this backend holds. */
  override numDataIds(): number {
    return this.dataIdCount;
  }

  /**
   * Memory: `numBytesDescribed`, the bytes the live tensors of this backend
   * would take with values, and `numBytesOnHost`, the bytes of the values it
   * keeps.
   */
  override memory(): { unreliable: boolean; numBytesDescribed: number; numBytesOnHost: number } {
    return { unreliable: false, numBytesDescribed: this.bytesDescribed, numBytesOnHost: this.bytesOnHost };
  }

  /** Times `f` on the host (kernels here only infer shapes). */
  override async time(f: () => void): Promise<tf.BackendTimingInfo> {
    const start = performance.now();
    f();
    return { kernelMs: performance.now() - start };
  }

  /** 32: the backend plans float32 tensors. */
  override floatPrecision(): 16 | 32 {
    return 32;
  }

  /** Forgets every data id. */
  override dispose(): void {
    this.records = new WeakMap();
    this.dataIdCount = 0;
    this.bytesDescribed = 0;
    this.bytesOnHost = 0;
  }

  private makeWithoutValues(spec: OutputSpec, origin: TensorOrigin): tf.TensorInfo {
    const dataId = {};
    const shape = [...spec.shape];
    this.add(dataId, { shape, dtype: spec.dtype, bytes: byteSize(shape, spec.dtype, undefined), values: undefined, origin, refCount: 1 });
    return { dataId, shape, dtype: spec.dtype };
  }

  private store(dataId: tf.DataId, values: tf.BackendValues, shape: number[], dtype: tf.DataType, origin: TensorOrigin, refCount: number): void {
    const small = elementCount(shape) <= SHAPE_ONLY_MAX_KEPT_ELEMENTS;
    const fill = !small && ArrayBuffer.isView(values) ? repeatedValue(values as tf.TypedArray) : undefined;
    this.add(dataId, {
      shape: [...shape],
      dtype,
      bytes: byteSize(shape, dtype, values),
      values: small ? values : undefined,
      ...(fill !== undefined ? { fill } : {}),
      origin,
      refCount,
    });
  }

  /** The one value of a larger tensor written from the host that repeats it (a fill), if it was one. */
  writtenFill(dataId: tf.DataId): number | undefined {
    return this.records.get(dataId)?.fill;
  }

  private add(dataId: tf.DataId, record: TensorRecord): void {
    this.records.set(dataId, record);
    this.dataIdCount++;
    this.bytesDescribed += record.bytes;
    this.bytesOnHost += hostBytes(record.values);
  }

  private valuesNotHeld(record: TensorRecord): ShapeOnlyError {
    const tensor = describeShape(record.shape, record.dtype);
    const elements = elementCount(record.shape);
    switch (record.origin.kind) {
      case 'kernel':
        return new ShapeOnlyError(
          `poptfjs is planning with shapes only, and the model read the values of ${tensor} made by kernel '${record.origin.kernelName}': ` +
            `kernel outputs on the shape-only backend have no values to read or to use on another backend; ${SHAPE_ONLY_REMEDY}`,
          record.origin.kernelName,
        );
      case 'written':
      case 'moved':
        return new ShapeOnlyError(
          `poptfjs is planning with shapes only, and the model read the values of ${tensor} ${record.origin.kind} from the host: ` +
            `the shape-only backend keeps the values of tensors of at most ${SHAPE_ONLY_MAX_KEPT_ELEMENTS} elements and this one has ${elements}; ${SHAPE_ONLY_REMEDY}`,
          record.origin.kind,
        );
      case 'drawn':
        return new ShapeOnlyError(
          `poptfjs is planning with shapes only, and the model read the values of ${tensor} drawn by ${record.origin.op}: ` +
            `random draws are not computed while planning; ${SHAPE_ONLY_REMEDY}`,
          record.origin.op,
        );
      case 'initial':
        return new ShapeOnlyError(
          `poptfjs is planning with shapes only, and the model read the initial values of weight '${record.origin.weight}' of layer '${record.origin.layer}' (${tensor}): ` +
            `initial values of weights are not computed while planning; ${SHAPE_ONLY_REMEDY}`,
          record.origin.layer,
        );
    }
  }
}
