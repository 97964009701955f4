/**
 * Every pattern poptfjs knows, in the order they run within a round of
 * `applyPatterns`: clean-ups first, then lowerings, then merges, and
 * dead-code elimination last so each round ends with a pruned graph.
 */
import { activationFusion } from './activation_fusion.js';
import { addReluFusion } from './add_relu_fusion.js';
import { biasFusion } from './bias_fusion.js';
import { broadcastWidening } from './broadcast_widening.js';
import { commonSubexpression } from './common_subexpression.js';
import { concatSinking } from './concat_sinking.js';
import { concatSplitting } from './concat_splitting.js';
import { constantFolding } from './constant_folding.js';
import { deadCodeElimination } from './dead_code_elimination.js';
import { fusedKernelLowering } from './fused_kernel_lowering.js';
import { multiplyAddConvolution } from './multiply_add_convolution.js';
import { noOpRemoval } from './no_op_removal.js';
import type { Pattern } from './pattern.js';
import { reluGradFusion } from './relu_grad_fusion.js';
import { sumAsAveragePool } from './sum_as_average_pool.js';
import { transposedMatMul } from './transposed_matmul.js';
import { transposeSinking } from './transpose_sinking.js';
import { weightLayoutCaching } from './weight_layout_caching.js';

/** Every pattern, in run order. */
export const ALL_PATTERNS: readonly Pattern[] = [
  noOpRemoval,
  constantFolding,
  fusedKernelLowering,
  transposeSinking,
  concatSinking,
  biasFusion,
  activationFusion,
  concatSplitting,
  multiplyAddConvolution,
  addReluFusion,
  reluGradFusion,
  transposedMatMul,
  sumAsAveragePool,
  broadcastWidening,
  weightLayoutCaching,
  commonSubexpression,
  deadCodeElimination,
];
