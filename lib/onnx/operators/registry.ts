/**
 * The ONNX operators poptfjs implements, by operator type and opset version:
 * the default domain (`ai.onnx`, written '' in models), and PopART's
 * `ai.graphcore` domain for the losses its builder writes.
 */
import { ACTIVATION_OPERATORS } from './activations.js';
import { COMPARISON_AND_LOGIC_OPERATORS } from './comparison_and_logic.js';
import { CONVOLUTION_OPERATORS } from './convolution.js';
import { ELEMENTWISE_ARITHMETIC_OPERATORS } from './elementwise_arithmetic.js';
import { ELEMENTWISE_MATH_OPERATORS } from './elementwise_math.js';
import { DROPOUT_OPERATORS } from './dropout.js';
import { FOURIER_OPERATORS } from './fourier.js';
import { GRAPHCORE_LOSS_OPERATORS } from './graphcore_losses.js';
import { GRID_SAMPLE_OPERATORS } from './grid_sample.js';
import { INDEXING_OPERATORS } from './indexing.js';
import { LOSS_OPERATORS } from './losses.js';
import { MATRIX_OPERATORS } from './matrix.js';
import { NORMALIZATION_OPERATORS } from './normalization.js';
import type { OperatorFamily, OperatorVersion } from './operator.js';
import { POOLING_OPERATORS } from './pooling.js';
import { RECURRENT_OPERATORS } from './recurrent.js';
import { REDUCTION_OPERATORS } from './reductions.js';
import { QUANTIZATION_OPERATORS } from './quantization.js';
import { RESIZE_OPERATORS } from './resize.js';
import { SHAPE_OPERATORS } from './shape_manipulation.js';
import { SIGNAL_WINDOW_OPERATORS } from './signal_windows.js';
import { SLICING_AND_JOINING_OPERATORS } from './slicing_and_joining.js';
import { SOFTMAX_OPERATORS } from './softmax.js';
import { TENSOR_CREATION_OPERATORS } from './tensor_creation.js';

/** The newest opset of the default domain poptfjs knows (ONNX 1.12). */
export const NEWEST_OPSET = 17;

const FAMILIES: readonly OperatorFamily[] = [
  ACTIVATION_OPERATORS,
  COMPARISON_AND_LOGIC_OPERATORS,
  CONVOLUTION_OPERATORS,
  DROPOUT_OPERATORS,
  ELEMENTWISE_ARITHMETIC_OPERATORS,
  ELEMENTWISE_MATH_OPERATORS,
  FOURIER_OPERATORS,
  GRID_SAMPLE_OPERATORS,
  INDEXING_OPERATORS,
  LOSS_OPERATORS,
  MATRIX_OPERATORS,
  NORMALIZATION_OPERATORS,
  POOLING_OPERATORS,
  RECURRENT_OPERATORS,
  REDUCTION_OPERATORS,
  QUANTIZATION_OPERATORS,
  RESIZE_OPERATORS,
  SHAPE_OPERATORS,
  SIGNAL_WINDOW_OPERATORS,
  SLICING_AND_JOINING_OPERATORS,
  SOFTMAX_OPERATORS,
  TENSOR_CREATION_OPERATORS,
];

/** PopART's operator domain. */
export const GRAPHCORE_DOMAIN = 'ai.graphcore';

/** The newest `ai.graphcore` opset poptfjs knows (the one PopART's builder writes). */
export const NEWEST_GRAPHCORE_OPSET = 1;

function registryOf(families: readonly OperatorFamily[]): Map<string, readonly OperatorVersion[]> {
  const registry = new Map<string, readonly OperatorVersion[]>();
  for (const family of families) {
    for (const [opType, versions] of Object.entries(family)) {
      if (registry.has(opType)) throw new Error(`internal error: ONNX operator ${opType} is implemented twice`);
      registry.set(
        opType,
        [...versions].sort((a, b) => a.since - b.since),
      );
    }
  }
  return registry;
}

const REGISTRY = registryOf(FAMILIES);
const GRAPHCORE_REGISTRY = registryOf([GRAPHCORE_LOSS_OPERATORS]);

/** True for the default ONNX domain, which models write as '' or 'ai.onnx'. */
export function isDefaultDomain(domain: string | undefined): boolean {
  return !domain || domain === 'ai.onnx';
}

function registryOfDomain(domain: string | undefined): ReadonlyMap<string, readonly OperatorVersion[]> | undefined {
  if (isDefaultDomain(domain)) return REGISTRY;
  return domain === GRAPHCORE_DOMAIN ? GRAPHCORE_REGISTRY : undefined;
}

/**
 * The implementation of `opType` of `domain` (default: the default domain)
 * for a model importing `opset` of that domain, or undefined if there is none.
 */
export function operatorVersion(opType: string, opset: number, domain?: string): OperatorVersion | undefined {
  const versions = registryOfDomain(domain)?.get(opType);
  if (!versions) return undefined;
  let chosen: OperatorVersion | undefined;
  for (const v of versions) if (v.since <= opset) chosen = v;
  return chosen;
}

/** The operator types poptfjs implements in `domain` (default: the default domain), sorted. */
export function supportedOperatorTypes(domain?: string): string[] {
  return [...(registryOfDomain(domain)?.keys() ?? [])].sort();
}
