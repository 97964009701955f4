/**
 * What a file declares about a tensor, checked before anything is allocated
 * for it: its dtype is one tfjs knows, and its shape is a list of at most
 * {@link MAX_DECLARED_RANK} non-negative integers whose product is an element
 * count a typed array can have. A file that declares anything else is refused
 * with an error naming the file, the tensor and what is wrong.
 */
import type { DataType } from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';

/** The dtypes a poptfjs file may declare. */
const DTYPES: ReadonlySet<string> = new Set(['float32', 'int32', 'bool', 'string', 'complex64']);

/** The highest rank a tensor read from a file may have (tfjs kernels take at most rank 6). */
export const MAX_DECLARED_RANK = 16;

/** The most elements a tensor read from a file may have: the longest typed array a JavaScript engine makes (2^32 - 1). */
export const MAX_DECLARED_ELEMENTS = 2 ** 32 - 1;

/** Where a declaration is, for errors: the text, or a function making it (called only for an error). */
export type DeclarationPlace = string | (() => string);

function fileError(where: DeclarationPlace, message: string): PoptfjsError {
  return new PoptfjsError(`${typeof where === 'string' ? where : where()}: ${message}`, { type: 'file' });
}

/** A tfjs dtype read from a file; an error naming `where` for anything else. */
export function checkedDtype(dtype: string, where: DeclarationPlace): DataType {
  if (!DTYPES.has(dtype)) throw fileError(where, `unknown dtype '${dtype}'; expected one of ${[...DTYPES].join(', ')}`);
  return dtype as DataType;
}

/** A shape read from a file, checked (see the module comment); an error naming `where` otherwise. */
export function checkedShape(shape: readonly number[], where: DeclarationPlace): number[] {
  const text = () => `[${shape.slice(0, MAX_DECLARED_RANK + 1).join(',')}${shape.length > MAX_DECLARED_RANK + 1 ? ',...' : ''}]`;
  if (shape.length > MAX_DECLARED_RANK) throw fileError(where, `shape ${text()} has rank ${shape.length}; at most ${MAX_DECLARED_RANK} is allowed`);
  const bad = shape.findIndex((d) => !Number.isSafeInteger(d) || d < 0);
  if (bad >= 0) throw fileError(where, `shape ${text()} has dimension ${bad} = ${shape[bad]}; dimensions are non-negative integers`);
  const elements = declaredElements(shape);
  if (elements > MAX_DECLARED_ELEMENTS) throw fileError(where, `shape ${text()} has ${elements} elements, more than a tensor can hold (${MAX_DECLARED_ELEMENTS})`);
  return [...shape];
}

/** The element count of a shape (a float, so that a crafted shape's product cannot wrap around). */
export function declaredElements(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Bytes a tensor of `shape` and `dtype` takes in tfjs (strings counted as one byte each, the least they take). */
export function declaredBytes(shape: readonly number[], dtype: DataType): number {
  const width = dtype === 'bool' || dtype === 'string' ? 1 : dtype === 'complex64' ? 8 : 4;
  return declaredElements(shape) * width;
}
