/**
 * Tensors as text, the way `ops.ipuPrintTensor` prints them: Poplar's
 * `PrintTensorFmt` options (PopTorch's `ipu_print_tensor` arguments).
 *
 * - A scalar prints as its element; a vector as `(a,b,c)` on one line,
 *   wrapped after an element when the line would pass `maxLineWidth`, the
 *   continuation indented two spaces past the vector's own indent; a tensor of
 *   higher rank as its opening bracket, then each sub-tensor on lines of its
 *   own indented one space further, then its closing bracket on a line of its
 *   own:
 *   ```
 *   title: (
 *    (1.4962566,1.7682219)
 *    (1.0884774,1.1320305)
 *   )
 *   ```
 * - A tensor of more than `summariseThreshold` elements (0: never) shows only
 *   the first and last `edgeItems` of each dimension longer than twice that,
 *   with `...` between.
 * - Floating-point elements: `fixed` has `digits` digits in all (integer
 *   part of the largest magnitude included), `scientific` has `digits`
 *   significant digits and a two-digit exponent (`1.4962566e+00`), `auto` is
 *   `fixed` when every non-zero finite magnitude is in [1e-4, 10^digits) and
 *   `scientific` otherwise, `none` gives each element its own shortest form
 *   to `digits` significant digits. With `digits` > 0 the elements are
 *   right-aligned to a common width; `digits` = 0 prints each element
 *   unaligned with all the digits a float32 needs. Integers print whole and
 *   booleans as `true`/`false`; NaN and infinities as `nan`, `inf`, `-inf`.
 */

/** How floating-point elements are written (PopTorch's `float_format`). */
export type FloatFormat = 'auto' | 'fixed' | 'scientific' | 'none';

/** The float formats, in PopTorch's order. */
export const FLOAT_FORMATS: readonly FloatFormat[] = ['auto', 'fixed', 'scientific', 'none'];

/** How a tensor is laid out as text (Poplar's `PrintTensorFmt`). */
export interface TensorTextFormat {
  /** More elements than this are summarised (0: never). */
  readonly summariseThreshold: number;
  /** Elements kept at each end of a summarised dimension. */
  readonly edgeItems: number;
  /** Lines longer than this are wrapped (0: never). */
  readonly maxLineWidth: number;
  /** Digits of floating-point elements (0: as many as a float32 needs, unaligned). */
  readonly digits: number;
  /** How floating-point elements are written. */
  readonly floatFormat: FloatFormat;
  /** The character between elements. */
  readonly separator: string;
  /** The character opening a (sub-)tensor. */
  readonly openBracket: string;
  /** The character closing a (sub-)tensor. */
  readonly closeBracket: string;
}

/**
 * PopTorch's defaults (`ipu_print_tensor`'s keyword arguments; Poplar takes
 * one character of the separator, so `", "` is `,`).
 */
export const DEFAULT_TENSOR_TEXT_FORMAT: TensorTextFormat = Object.freeze({
  summariseThreshold: 1000,
  edgeItems: 3,
  maxLineWidth: 80,
  digits: 4,
  floatFormat: 'auto',
  separator: ',',
  openBracket: '(',
  closeBracket: ')',
});

/** The kinds of element a tensor prints. */
export type PrintedDtype = 'float32' | 'int32' | 'bool';

/** A dimension's indices as printed: all of them, or the edges with a gap (-1) between. */
function shownIndices(length: number, summarise: boolean, edgeItems: number): number[] {
  if (!summarise || length <= 2 * edgeItems) return Array.from({ length }, (_, i) => i);
  const head = Array.from({ length: edgeItems }, (_, i) => i);
  const tail = Array.from({ length: edgeItems }, (_, i) => length - edgeItems + i);
  return [...head, -1, ...tail];
}

function exponentText(text: string): string {
  return text.replace(/e([+-])(\d)$/, 'e$10$2');
}

function nonFiniteText(x: number): string | undefined {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  return undefined;
}

/** A function writing the floating-point elements `shown` as `format` asks. */
function floatWriter(shown: readonly number[], format: TensorTextFormat): (x: number) => string {
  const digits = format.digits;
  if (digits === 0) return (x) => nonFiniteText(x) ?? String(Number(x.toPrecision(9)));
  const finite = shown.filter((x) => Number.isFinite(x) && x !== 0).map(Math.abs);
  const largest = finite.length > 0 ? Math.max(...finite) : 0;
  const smallest = finite.length > 0 ? Math.min(...finite) : 0;
  let kind = format.floatFormat;
  if (kind === 'auto') kind = finite.length === 0 || (smallest >= 1e-4 && largest < 10 ** digits) ? 'fixed' : 'scientific';
  switch (kind) {
    case 'fixed': {
      const integerDigits = largest >= 1 ? Math.floor(Math.log10(largest)) + 1 : 1;
      const decimals = Math.max(0, digits - integerDigits);
      return (x) => nonFiniteText(x) ?? x.toFixed(decimals);
    }
    case 'scientific':
      return (x) => nonFiniteText(x) ?? exponentText(x.toExponential(Math.max(0, digits - 1)));
    default:
      return (x) => nonFiniteText(x) ?? String(Number(x.toPrecision(digits)));
  }
}

/**
 * `values` (row-major, of `shape`) as text laid out by `format`, starting at
 * column `startColumn` of its first line.
 */
export function tensorText(values: ArrayLike<number>, shape: readonly number[], dtype: PrintedDtype, format: TensorTextFormat, startColumn = 0): string {
  const size = shape.reduce((a, b) => a * b, 1);
  const summarise = format.summariseThreshold > 0 && size > format.summariseThreshold;
  const indices = shape.map((length) => shownIndices(length, summarise, format.edgeItems));
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));

  // The elements shown, to choose the float format and the common width from.
  const shown: number[] = [];
  const collect = (dim: number, offset: number): void => {
    if (dim === shape.length) {
      shown.push(Number(values[offset]));
      return;
    }
    for (const i of indices[dim]!) if (i >= 0) collect(dim + 1, offset + i * strides[dim]!);
  };
  collect(0, 0);
  const write = dtype === 'float32' ? floatWriter(shown, format) : dtype === 'bool' ? (x: number) => (x ? 'true' : 'false') : (x: number) => String(x);
  const width = format.digits > 0 ? Math.max(0, ...shown.map((x) => write(x).length)) : 0;
  const element = (offset: number) => write(Number(values[offset])).padStart(width);

  const { openBracket: open, closeBracket: close, separator, maxLineWidth } = format;
  const vector = (offset: number, indent: number, column: number): string => {
    const items = indices[shape.length - 1]!.map((i) => (i < 0 ? '...' : element(offset + i * strides[shape.length - 1]!)));
    if (items.length === 0) return `${open}${close}`;
    const lines: string[] = [];
    let line = open;
    let lineStart = column;
    items.forEach((item, k) => {
      const text = item + (k < items.length - 1 ? separator : close);
      if (k > 0 && maxLineWidth > 0 && lineStart + line.length + text.length > maxLineWidth) {
        lines.push(line.trimEnd());
        line = ' '.repeat(indent + 2);
        lineStart = 0;
      }
      line += text;
    });
    lines.push(line);
    return lines.join('\n');
  };
  const block = (dim: number, offset: number, indent: number, column: number): string => {
    if (dim === shape.length - 1) return vector(offset, indent, column);
    const inner = ' '.repeat(indent + 1);
    const children = indices[dim]!.map((i) => (i < 0 ? `${inner}...` : inner + block(dim + 1, offset + i * strides[dim]!, indent + 1, indent + 1)));
    return [open, ...children, ' '.repeat(indent) + close].join('\n');
  };
  if (shape.length === 0) return element(0).trimStart();
  return block(0, 0, 0, startColumn);
}

/** The text `ops.ipuPrintTensor` prints: `<title>: <tensor>`, or the tensor alone without a title. */
export function printedTensorText(title: string, values: ArrayLike<number>, shape: readonly number[], dtype: PrintedDtype, format: TensorTextFormat): string {
  const prefix = title === '' ? '' : `${title}: `;
  return prefix + tensorText(values, shape, dtype, format, prefix.length);
}
