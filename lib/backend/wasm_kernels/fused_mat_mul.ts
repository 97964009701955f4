/**
 * `_FusedMatMul` for the wasm backend: the backend's own (XNNPACK), or, for
 * a node the `MultiplyAddConvolution` pattern marked, the product routine of
 * batch_mat_mul_simd.ts with fused multiply-adds. A dense layer's product
 * `[rows, depth]` by one weight matrix `[depth, cols]` is a 1 × 1
 * convolution, and runs as one (fused_conv2d.ts): its weight packed in
 * panels of 8 columns once per weight tensor, each tile starting from the
 * bias and ending with the activation, the rows shared with the helper
 * thread. A transformer encoder's products (64 rows, 2 threads, relu; the
 * product against XNNPACK): 256 → 1024 0.39 against 0.46 ms, 1024 → 256
 * 0.35 against 0.48, 256 → 768 0.24 against 0.34, 256 → 256 0.09 against
 * 0.11.
 *
 * A marked node with float32 operands, neither transposed, one right
 * matrix (its batch dimensions all 1), columns in fours, a linear, relu or
 * relu6 activation and a bias of one value per column or none runs so;
 * other marked ones, and all where the engine refuses relaxed SIMD, run
 * the backend's own kernel, with its bias put right in batches of more
 * than one product and on transposed operands (see {@link byOwnKernel}).
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { KernelCallShapes } from '../kernel_call_shapes.js';
import { asksFusedMultiplyAdd, isColumnBias, MULTIPLY_ADD_ACTIVATIONS, type MultiplyAddActivation } from '../multiply_add_attribute.js';
import { OwnWasmKernel } from './own_wasm_kernel.js';
import { type ProductVariant, simdProductFits } from './batch_mat_mul_simd.js';
import { convolutionByProduct } from './fused_conv2d.js';
import { KernelCallScope } from './kernel_call_scope.js';
import { type FilterCopyShape, packedFilterCopy } from './packed_filter.js';

const BACKEND = 'wasm';

/** The wasm backend's own `_FusedMatMul` (registered by the import above), which this kernel replaces and calls. */
const OWN_FUSED_MAT_MUL = new OwnWasmKernel(tf._FusedMatMul);

/** A marked product the routine computes: its sizes, its output's shape and the routine's variant. */
interface MarkedProduct {
  readonly rows: number;
  readonly depth: number;
  readonly cols: number;
  readonly outShape: readonly number[];
  readonly variant: ProductVariant;
}

/** The product of a marked `_FusedMatMul` call, when the routine computes it. */
function multiplyAddProduct(args: KernelCallShapes): MarkedProduct | undefined {
  const { a, b, bias, preluActivationWeights } = args.inputs;
  const attrs = (args.attrs ?? {}) as Partial<tf._FusedMatMulAttrs> & Record<string, unknown>;
  if (!asksFusedMultiplyAdd(attrs) || a === undefined || b === undefined || preluActivationWeights !== undefined) return undefined;
  if (attrs.transposeA === true || attrs.transposeB === true || a.dtype !== 'float32' || b.dtype !== 'float32') return undefined;
  const activation = attrs.activation ?? 'linear';
  if (!MULTIPLY_ADD_ACTIVATIONS.has(activation) || a.shape.length < 2 || b.shape.length < 2) return undefined;
  const depth = a.shape[a.shape.length - 1]!;
  const cols = b.shape[b.shape.length - 1]!;
  const bOuter = b.shape.slice(0, -2);
  if (b.shape[b.shape.length - 2] !== depth || bOuter.some((d) => d !== 1)) return undefined;
  if (!isColumnBias(bias, cols)) return undefined;
  const rows = a.shape.reduce((n, d) => n * d, 1) / depth;
  if (!simdProductFits({ batch: 1, rows, depth, cols })) return undefined;
  const outer = tf.backend_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), bOuter);
  return {
    rows,
    depth,
    cols,
    outShape: [...outer, a.shape[a.shape.length - 2]!, cols],
    variant: { multiplyAdd: 'fused', bias: bias !== undefined, activation: activation as MultiplyAddActivation, windows: false, packedB: true },
  };
}

/** The rows of the marked `_FusedMatMul` call `args` where the routine computes it (where the engine has relaxed SIMD), else undefined. */
export function markedProductRows(args: KernelCallShapes): number | undefined {
  return multiplyAddProduct(args)?.rows;
}

/** The copy of its weight that the `_FusedMatMul` call `args`, marked, makes and keeps while the weight lives; undefined where it runs the backend's own kernel. */
export function markedMatMulFilterCopy(args: KernelCallShapes): FilterCopyShape | undefined {
  const product = multiplyAddProduct(args);
  return product && packedFilterCopy(product.depth, product.cols);
}

/**
 * The backend's own kernel, its bias put right. tfjs 4.22's wasm kernel
 * adds the bias right only where it multiplies one pair of matrices,
 * neither transposed (XNNPACK's path): otherwise each product's first row
 * gets it, and every other row gets the last column's bias in every column.
 * There, transposed operands are transposed first (a copy), a batch
 * against one right matrix is one product of the stacked rows of `a` (a
 * reshape, no copy), and any other batch runs product by product.
 */
function byOwnKernel(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const own = OWN_FUSED_MAT_MUL.get();
  const { a, b, bias, preluActivationWeights } = args.inputs as Record<string, tf.TensorInfo | undefined>;
  const attrs = args.attrs as unknown as tf._FusedMatMulAttrs;
  if (a === undefined || b === undefined || bias === undefined || a.shape.length !== 3 || b.shape.length !== 3) return own.kernelFunc(args);
  const batch = Math.max(a.shape[0]!, b.shape[0]!);
  if (batch === 1 && !attrs.transposeA && !attrs.transposeB) return own.kernelFunc(args);
  const extra = preluActivationWeights === undefined ? {} : { preluActivationWeights };
  const plain = { ...args.attrs, transposeA: false, transposeB: false };
  return KernelCallScope.run(BACKEND, args.backend as tf.KernelBackend, (scope) => {
    const left = attrs.transposeA ? scope.transpose(a, [0, 2, 1]) : a;
    const right = attrs.transposeB ? scope.transpose(b, [0, 2, 1]) : b;
    const call = (l: tf.TensorInfo, r: tf.TensorInfo) => scope.callKernel(own, { a: l, b: r, bias, ...extra }, plain);
    const [leftBatch, rows, depth] = left.shape as [number, number, number];
    if (right.shape[0] === 1) {
      const out = call(scope.reshape(left, [1, leftBatch * rows, depth]), right);
      return scope.reshape(out, [leftBatch, rows, out.shape[2]!]);
    }
    const matrix = (x: tf.TensorInfo, i: number) => (x.shape[0] === 1 ? x : scope.call(tf.Slice, { x }, { begin: [i, 0, 0], size: [1, x.shape[1]!, x.shape[2]!] }));
    const products = Array.from({ length: batch }, (_, i) => call(matrix(left, i), matrix(right, i)));
    return scope.call(tf.Concat, products, { axis: 0 });
  });
}

function fusedMatMul(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const product = multiplyAddProduct(args);
  if (product !== undefined) {
    const { a, b, bias } = args.inputs as Record<string, tf.TensorInfo | undefined>;
    // The product as a 1 × 1 convolution of one image, `rows` wide, `depth` channels in, `cols` out.
    const info = tf.backend_util.computeConv2DInfo([1, 1, product.rows, product.depth], [1, 1, product.depth, product.cols], 1, 1, 'valid', undefined, false, 'channelsLast');
    const out = convolutionByProduct(args.backend as BackendWasm, { x: a, filter: b, bias }, info, product.variant, product.outShape);
    if (out !== undefined) return out;
  }
  return byOwnKernel(args);
}

/** The wasm kernel of `_FusedMatMul`: fused multiply-adds for marked nodes where the engine has relaxed SIMD, the backend's own otherwise. */
export const fusedMatMulConfig: tf.KernelConfig = {
  kernelName: tf._FusedMatMul,
  backendName: BACKEND,
  kernelFunc: fusedMatMul,
  setupFunc: (backend) => OWN_FUSED_MAT_MUL.setup(backend),
};
