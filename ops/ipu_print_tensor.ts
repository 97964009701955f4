/**
 * `ipuPrintTensor`: PopTorch's `ipu_print_tensor`, to look at a tensor while
 * the model runs on the device.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../lib/common/errors.js';
import { POPTFJS_KERNELS } from '../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { DEFAULT_TENSOR_TEXT_FORMAT, FLOAT_FORMATS, type FloatFormat, type TensorTextFormat } from '../lib/runtime/tensor_text.js';

export type { FloatFormat } from '../lib/runtime/tensor_text.js';

/**
 * How {@link ipuPrintTensor} prints (PopTorch's keyword arguments, which are
 * Poplar's `PrintTensorFmt`); every field is optional, with PopTorch's default.
 */
export interface IpuPrintTensorOptions {
  /** Also print the gradient of the tensor in the backward pass, titled `<title>_gradient` (default true). */
  readonly printGradient?: boolean;
  /** Tensors of more elements than this show only their edges (default 1000; 0: never). */
  readonly summariseThreshold?: number;
  /** Elements kept at each end of a summarised dimension (default 3). */
  readonly edgeItems?: number;
  /** Lines longer than this are wrapped (default 80; 0: never). */
  readonly maxLineWidth?: number;
  /** Digits of floating-point elements (default 4; 0: all a float32 needs, unaligned). */
  readonly digits?: number;
  /** `'auto'` (default), `'fixed'`, `'scientific'` or `'none'` (each element in its own shortest form). */
  readonly floatFormat?: FloatFormat;
  /** The character between elements (default `,`). */
  readonly separator?: string;
  /** The character opening a tensor (default `(`). */
  readonly openBracket?: string;
  /** The character closing a tensor (default `)`). */
  readonly closeBracket?: string;
}

const INTEGER_FIELDS = ['summariseThreshold', 'edgeItems', 'maxLineWidth', 'digits'] as const;
const CHARACTER_FIELDS = ['separator', 'openBracket', 'closeBracket'] as const;
const OPTION_NAMES: readonly string[] = ['printGradient', ...INTEGER_FIELDS, 'floatFormat', ...CHARACTER_FIELDS];

function invalid(message: string): PoptfjsError {
  return new PoptfjsError(`ipuPrintTensor: ${message}`, { type: 'trace', location: 'ipuPrintTensor' });
}

function formatOf(options: IpuPrintTensorOptions): TensorTextFormat {
  if (typeof options !== 'object' || options === null) throw invalid(`options must be an object, got ${options === null ? 'null' : typeof options}`);
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.includes(key)) throw invalid(`unknown option '${key}'; expected one of ${OPTION_NAMES.join(', ')}`);
  }
  const format: Record<string, unknown> = { ...DEFAULT_TENSOR_TEXT_FORMAT };
  for (const key of INTEGER_FIELDS) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 0) throw invalid(`${key} must be a non-negative integer, got ${String(value)}`);
    format[key] = value;
  }
  if (options.floatFormat !== undefined) {
    if (!FLOAT_FORMATS.includes(options.floatFormat)) {
      throw invalid(`floatFormat must be one of ${FLOAT_FORMATS.map((f) => `'${f}'`).join(', ')}, got ${JSON.stringify(options.floatFormat)}`);
    }
    format.floatFormat = options.floatFormat;
  }
  for (const key of CHARACTER_FIELDS) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || [...value].length !== 1) throw invalid(`${key} must be one character (Poplar prints one), got ${JSON.stringify(value)}`);
    format[key] = value;
  }
  return format as unknown as TensorTextFormat;
}

/**
 * Returns `x` unchanged and prints its value, after `title` and a colon, each
 * time the model runs on the simulated IPU: once per micro-batch, through the
 * `op` logger (shown at every log level but OFF; `POPTFJS_LOG_DEST` sends it
 * to a file). The print is a node of its own, `poptfjs.IpuPrintTensor`, which
 * copies the tensor to the host; as in PopTorch, use the returned tensor in
 * place of `x`, or the print is removed with the rest of the unused graph. In
 * training, the gradient of the tensor is printed too, titled
 * `<title>_gradient`, unless `printGradient` is false. Outside a poptfjs model
 * (plain tfjs, and while a model is traced) it is the identity and prints
 * nothing, as PopTorch's op is on the CPU. See {@link IpuPrintTensorOptions}
 * for the layout of the text.
 */
export function ipuPrintTensor(x: tf.Tensor, title = '', options: IpuPrintTensorOptions = {}): tf.Tensor {
  if (!(x instanceof tf.Tensor)) throw invalid(`expected a tf.Tensor to print, got ${x === null ? 'null' : typeof x}`);
  if (x.dtype !== 'float32' && x.dtype !== 'int32' && x.dtype !== 'bool') throw invalid(`cannot print a ${x.dtype} tensor; the device holds float32, int32 and bool tensors`);
  if (typeof title !== 'string') throw invalid(`the title must be a string, got ${typeof title}`);
  const format = formatOf(options);
  const printGradient = options.printGradient ?? true;
  if (typeof printGradient !== 'boolean') throw invalid(`printGradient must be a boolean, got ${typeof printGradient}`);
  const attrs = { title, printGradient, ...format };
  return tf.engine().runKernel(POPTFJS_KERNELS.ipuPrintTensor, { x }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor;
}
