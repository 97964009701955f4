/**
 * Shape rules of image kernels (NHWC): resizing and its gradients, crops,
 * flips, rotations, projective transforms, pixels from the host, and the
 * kernels that cannot be planned from shapes: non-maximum suppression (how
 * many boxes survive depends on the scores) and `Draw` (it paints values on a
 * canvas).
 */
import type * as tf from '@tensorflow/tfjs';
import { output, type KernelCall, type KernelShapeRule } from '../rules/kernel_shape_rule.js';
import { unplannableRule, valueDependentRule } from '../rules/value_dependent_rule.js';

/** The width and height of the pixels handed to `tf.browser.fromPixels` (a video's are its frame's). */
interface PixelSource {
  readonly width?: number;
  readonly height?: number;
  readonly videoWidth?: number;
  readonly videoHeight?: number;
}

/** A resize to attribute `size`: the images' batch and channels; `dtype` or the images' own. */
function resize(dtype?: tf.DataType): KernelShapeRule {
  return (call) => {
    const images = call.input('images');
    const [batch, , , channels] = images.shape as [number, number, number, number];
    const [height, width] = call.attrsAs<tf.ResizeBilinearAttrs>().size;
    return output([batch, height, width, channels], dtype ?? images.dtype);
  };
}

/** A kernel whose output has its `image` input's shape and dtype. */
const sameAsImage: KernelShapeRule = (call) => {
  const image = call.input('image');
  return output(image.shape, image.dtype);
};

const SURVIVING_BOXES = 'how many boxes survive depends on the values of the boxes and scores';

/** `NonMaxSuppressionV4` without padding: as many indices as boxes survive. */
const unpaddedNonMaxSuppression = valueDependentRule(`${SURVIVING_BOXES} (unless padded to maxOutputSize)`);

/** `NonMaxSuppressionV4`: padded to `maxOutputSize` boxes, the output's shape is known; otherwise it depends on the scores. */
const nonMaxSuppressionV4: KernelShapeRule = Object.assign(
  (call: KernelCall) => {
    const { maxOutputSize, padToMaxOutputSize } = call.attrsAs<tf.NonMaxSuppressionV4Attrs>();
    if (padToMaxOutputSize) return [output([maxOutputSize], 'int32'), output([], 'int32')];
    return unpaddedNonMaxSuppression(call);
  },
  { valueDependence: unpaddedNonMaxSuppression.valueDependence },
);

/** The image kernels, by kernel name. */
export const IMAGE_RULES: Readonly<Record<string, KernelShapeRule>> = {
  ResizeBilinear: resize('float32'),
  ResizeNearestNeighbor: resize(),
  /**
   * The gradient has the forward images' shape. (The cpu backend of tfjs
   * 4.22 swaps height and width here, which only agrees for square images.)
   */
  ResizeBilinearGrad: (call) => output(call.input('images').shape, 'float32'),
  ResizeNearestNeighborGrad: (call) => {
    const images = call.input('images');
    return output(images.shape, images.dtype);
  },
  /** One crop of `cropSize` per box, float32. */
  CropAndResize: (call) => {
    const [cropHeight, cropWidth] = call.attrsAs<tf.CropAndResizeAttrs>().cropSize;
    const image = call.input('image');
    return output([call.input('boxes').shape[0]!, cropHeight, cropWidth, image.shape[3]!], 'float32');
  },
  FlipLeftRight: sameAsImage,
  RotateWithOffset: sameAsImage,
  /** Projective transforms: `outputShape` (or the images' size) per image. */
  Transform: (call) => {
    const image = call.input('image');
    const [batch, height, width, channels] = image.shape as [number, number, number, number];
    const [outHeight, outWidth] = call.attrsAs<tf.TransformAttrs>().outputShape ?? [height, width];
    return output([batch, outHeight, outWidth, channels], image.dtype);
  },
  /** Pixels of the host (a backend that registers this kernel reads them itself): height × width × channels, int32. */
  FromPixels: (call) => {
    const pixels = (call.inputs as unknown as { pixels: PixelSource }).pixels;
    const width = pixels.videoWidth ?? pixels.width ?? 0;
    const height = pixels.videoHeight ?? pixels.height ?? 0;
    return output([height, width, call.attrsAs<tf.FromPixelsAttrs>().numChannels], 'int32');
  },
  NonMaxSuppressionV3: valueDependentRule(SURVIVING_BOXES),
  NonMaxSuppressionV4: nonMaxSuppressionV4,
  NonMaxSuppressionV5: valueDependentRule(SURVIVING_BOXES),
  Draw: unplannableRule('it draws the values of its image on a canvas'),
};
