/**
 * Tensor data as it is stored in poptfjs files: the elements as raw
 * little-endian bytes (float32 and int32 as 4 bytes, bool as 1 byte), string
 * tensors as a list of strings. On the host, tensor data is a typed array
 * with a shape and a tfjs dtype ({@link TensorData}), so files can be read,
 * written and inspected without loading tfjs.
 */
import type * as tf from '@tensorflow/tfjs';
import { endianness } from 'node:os';
import { PoptfjsError } from '../common/errors.js';
import type { ConstantData } from '../ir/graph.js';
import { checkedDtype, checkedShape, declaredElements } from './declared_tensor.js';
import { ElementEncoding, type TensorMessage } from './executable_proto.js';

/** A tensor's elements on the host. */
export interface TensorData {
  readonly shape: readonly number[];
  readonly dtype: tf.DataType;
  readonly data: ConstantData;
}

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

/** The bytes of a typed array in little-endian order (a view of the array itself on little-endian hosts). */
function littleEndianBytes(array: Float32Array | Int32Array | Uint8Array): Uint8Array {
  const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  if (LITTLE_ENDIAN_HOST || array.BYTES_PER_ELEMENT === 1) return bytes;
  const swapped = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i += 4) {
    swapped[i] = bytes[i + 3]!;
    swapped[i + 1] = bytes[i + 2]!;
    swapped[i + 2] = bytes[i + 1]!;
    swapped[i + 3] = bytes[i]!;
  }
  return swapped;
}

/** A fresh, aligned copy of little-endian bytes as host-order 4-byte words. */
function hostOrderWords(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.length);
  if (LITTLE_ENDIAN_HOST) {
    copy.set(bytes);
  } else {
    for (let i = 0; i < bytes.length; i += 4) {
      copy[i] = bytes[i + 3]!;
      copy[i + 1] = bytes[i + 2]!;
      copy[i + 2] = bytes[i + 1]!;
      copy[i + 3] = bytes[i]!;
    }
  }
  return copy.buffer;
}

/** The stored form of tensor data. */
export function tensorMessage(tensor: TensorData): TensorMessage {
  const { shape, dtype, data } = tensor;
  const base = { shape: [...shape], dtype };
  if (Array.isArray(data)) return { ...base, encoding: ElementEncoding.STRING, data: new Uint8Array(0), strings: [...data] };
  const encoding = data instanceof Float32Array ? ElementEncoding.FLOAT32 : data instanceof Int32Array ? ElementEncoding.INT32 : ElementEncoding.UINT8;
  return { ...base, encoding, data: littleEndianBytes(data), strings: [] };
}

function encodingName(encoding: number): string {
  return (
    Object.entries(ElementEncoding).find(([, code]) => code === encoding && code !== ElementEncoding.ELEMENT_ENCODING_UNSPECIFIED)?.[0] ??
    `unknown element encoding ${encoding}`
  );
}

/**
 * Tensor data from its stored form; `where` names the tensor in errors. The
 * dtype, shape and encoding are checked, and the element count the shape
 * declares is compared with what is stored, before anything is allocated.
 */
export function tensorData(message: TensorMessage, where: string): TensorData {
  const dtype = checkedDtype(message.dtype, where);
  const shape = checkedShape(message.shape, where);
  const numeric = message.encoding === ElementEncoding.FLOAT32 || message.encoding === ElementEncoding.INT32 || message.encoding === ElementEncoding.UINT8;
  if (dtype === 'string' ? message.encoding !== ElementEncoding.STRING : !numeric) {
    const expected = dtype === 'string' ? 'STRING' : 'FLOAT32, INT32 or UINT8';
    throw new PoptfjsError(`${where}: a ${dtype} tensor is stored as ${encodingName(message.encoding)}; expected ${expected}`, { type: 'file' });
  }
  const elements = declaredElements(shape) * (dtype === 'complex64' ? 2 : 1);
  const bytes = message.data;
  const stored = message.encoding === ElementEncoding.STRING ? message.strings.length : message.encoding === ElementEncoding.UINT8 ? bytes.length : bytes.length / 4;
  if (stored !== elements) {
    throw new PoptfjsError(
      `${where}: a ${dtype}[${shape.join(',')}] tensor needs ${elements} element(s), but ${message.encoding === ElementEncoding.STRING ? `${message.strings.length} string(s)` : `${bytes.length} byte(s)`} are stored`,
      { type: 'file' },
    );
  }
  switch (message.encoding) {
    case ElementEncoding.FLOAT32:
      return { shape, dtype, data: new Float32Array(hostOrderWords(bytes)) };
    case ElementEncoding.INT32:
      return { shape, dtype, data: new Int32Array(hostOrderWords(bytes)) };
    case ElementEncoding.UINT8:
      return { shape, dtype, data: Uint8Array.from(bytes) };
    default:
      return { shape, dtype, data: [...message.strings] };
  }
}

/** The stored size of tensor data, in bytes. */
export function tensorDataBytes(data: TensorData): number {
  if (Array.isArray(data.data)) return data.data.reduce((n, s) => n + Buffer.byteLength(s), 0);
  return (data.data as Float32Array | Int32Array | Uint8Array).byteLength;
}

/** True if two tensors hold the same dtype, shape and bytes. */
export function sameTensorData(a: TensorData, b: TensorData): boolean {
  if (a.dtype !== b.dtype || a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) return false;
  if (Array.isArray(a.data) || Array.isArray(b.data)) {
    return Array.isArray(a.data) && Array.isArray(b.data) && a.data.length === b.data.length && a.data.every((s, i) => s === (b.data as string[])[i]);
  }
  const x = a.data as Float32Array | Int32Array | Uint8Array;
  const y = b.data as Float32Array | Int32Array | Uint8Array;
  return Buffer.compare(new Uint8Array(x.buffer, x.byteOffset, x.byteLength), new Uint8Array(y.buffer, y.byteOffset, y.byteLength)) === 0;
}
