/**
 * Convolutions and poolings whose window is larger than their padded input.
 * tfjs computes such a kernel into an output with no elements (a 9×9 filter
 * on an 8×8 input with padding 'valid' gives 0×0), which no tile mapping,
 * cost or later layer can use, and which the wasm backend does not always
 * come back from; PyTorch refuses the same layer ("Kernel size can't be
 * greater than actual input size"), and a trace refuses it before the
 * kernel runs.
 */
import * as tf from '@tensorflow/tfjs';

type Conv2DArgs = Parameters<typeof tf.backend_util.computeConv2DInfo>;
type Conv3DArgs = Parameters<typeof tf.backend_util.computeConv3DInfo>;
type Pool2DArgs = Parameters<typeof tf.backend_util.computePool2DInfo>;
type Pool3DArgs = Parameters<typeof tf.backend_util.computePool3DInfo>;

/** The output shape tfjs gives a windowed kernel on input `x` (and `filter`), or undefined for another kernel. */
function windowedOutputShape(
  kernel: string,
  x: readonly number[],
  filter: readonly number[] | undefined,
  a: Readonly<Record<string, unknown>>,
): readonly number[] | undefined {
  const { backend_util: util } = tf;
  const dilations = (a.dilations ?? 1) as never;
  const rounding = a.dimRoundingMode as never;
  switch (kernel) {
    case 'Conv2D':
    case 'FusedConv2D':
    case 'DepthwiseConv2dNative':
    case 'FusedDepthwiseConv2D': {
      if (filter === undefined || x.length !== 4 || filter.length !== 4) return undefined;
      const format = util.convertConv2DDataFormat((a.dataFormat ?? 'NHWC') as 'NHWC' | 'NCHW');
      const depthwise = kernel.includes('Depthwise');
      return util.computeConv2DInfo(x as Conv2DArgs[0], filter as Conv2DArgs[1], a.strides as never, dilations, a.pad as never, rounding, depthwise, format).outShape;
    }
    case 'Conv3D':
      if (filter === undefined || x.length !== 5 || filter.length !== 5) return undefined;
      return util.computeConv3DInfo(x as Conv3DArgs[0], filter as Conv3DArgs[1], a.strides as never, dilations, a.pad as never).outShape;
    case 'MaxPool':
    case 'AvgPool':
    case 'MaxPoolWithArgmax':
      if (x.length !== 4) return undefined;
      return util.computePool2DInfo(x as Pool2DArgs[0], a.filterSize as never, a.strides as never, 1, a.pad as never, rounding).outShape;
    case 'MaxPool3D':
    case 'AvgPool3D':
      if (x.length !== 5) return undefined;
      return util.computePool3DInfo(x as Pool3DArgs[0], a.filterSize as never, a.strides as never, 1, a.pad as never, rounding).outShape;
    default:
      return undefined;
  }
}

const sizeOf = (shape: readonly number[]): number => shape.reduce((n, d) => n * d, 1);

/** The window of a windowed kernel as `9×9`: the filter's spatial dimensions, or a pooling's filterSize. */
function windowOf(kernel: string, filter: readonly number[] | undefined, filterSize: unknown): string {
  const spatial = kernel.includes('3D') ? 3 : 2;
  if (filter) return filter.slice(0, spatial).join('×');
  if (typeof filterSize === 'number') return Array.from({ length: spatial }, () => filterSize).join('×');
  return Array.isArray(filterSize) ? filterSize.join('×') : String(filterSize);
}

/**
 * Why the call of `kernel` on input `x` (and, for a convolution, `filter`)
 * with `attrs` cannot be traced, or undefined when it can (or is no windowed
 * kernel): a convolution or pooling that would make an output with no
 * elements from an input with some.
 */
export function windowLargerThanInput(
  kernel: string,
  x: readonly number[] | undefined,
  filter: readonly number[] | undefined,
  attrs: Readonly<Record<string, unknown>>,
): string | undefined {
  if (x === undefined || sizeOf(x) === 0) return undefined;
  let output: readonly number[] | undefined;
  try {
    output = windowedOutputShape(kernel, x, filter, attrs);
  } catch {
    // Attributes tfjs's own checks refuse: the kernel says so when it runs.
    return undefined;
  }
  if (output === undefined || sizeOf(output) > 0) return undefined;
  const pad = typeof attrs.pad === 'string' ? `, padding '${attrs.pad}'` : '';
  return (
    `${kernel} makes an output of shape [${output.join(',')}], with no elements, from an input of shape [${x.join(',')}]: ` +
    `its window (${windowOf(kernel, filter, attrs.filterSize)}${pad}) is larger than the padded input; a convolution or pooling window must fit in its input`
  );
}
