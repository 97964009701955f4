/**
 * `builder.aiGraphcore`: PopART's losses, written as `ai.graphcore` nodes
 * (`Nll`, `L1`, `IdentityLoss`) that the ONNX importer runs:
 *
 * ```ts
 * const loss = builder.aiGraphcore.nllloss([probs, labels], { reduction: ReductionType.Mean });
 * ```
 *
 * Each reduces its per-sample losses as `reduction` says (`Mean` by default,
 * `Sum`, or `NoReduction`).
 */
import { z } from 'zod';
import { ReductionType } from '../option_vocabulary/enums.js';
import type { NodeAdder, OnnxAttributes, TensorId } from './ai_onnx_opset.js';
import { checkedArgument } from './checked_argument.js';

/** Options every loss takes. */
export interface LossOptions {
  /** How the per-sample losses are reduced (default `Mean`). */
  readonly reduction?: ReductionType;
  /** The name of the node and its output. */
  readonly debugContext?: string;
}

/** Options of {@link AiGraphcoreOpset.nllloss}. */
export interface NllLossOptions extends LossOptions {
  /** Samples with this label count for nothing (nor in the mean). */
  readonly ignoreIndex?: number;
  /** Whether the input holds log-probabilities rather than probabilities (default false). */
  readonly inputIsLogProbability?: boolean;
}

const reductionSchema = z.enum([ReductionType.Sum, ReductionType.Mean, ReductionType.NoReduction]).default(ReductionType.Mean);
const lossSchema = z.strictObject({ reduction: reductionSchema, debugContext: z.string().min(1).optional() });
const nllSchema = lossSchema.extend({ ignoreIndex: z.number().int().optional(), inputIsLogProbability: z.boolean().default(false) });

/** How the `reduction` attribute spells a reduction. */
function reductionAttribute(reduction: ReductionType): string {
  return reduction === ReductionType.NoReduction ? 'None' : reduction;
}

/** The operators of `builder.aiGraphcore`. */
export class AiGraphcoreOpset {
  /** @internal A builder makes its opset. */
  constructor(private readonly addNode: NodeAdder) {}

  private loss(opType: string, inputs: readonly TensorId[], attributes: OnnxAttributes, debugContext: string | undefined): TensorId {
    return this.addNode(opType, inputs, 1, attributes, debugContext)[0]!;
  }

  /**
   * The negative log likelihood of `[probs, labels]`: probabilities (or
   * log-probabilities) of shape `[..., C]` with the classes last, and integer
   * labels of shape `[...]`.
   */
  nllloss(inputs: readonly [TensorId, TensorId], options: NllLossOptions = {}): TensorId {
    const o = checkedArgument(nllSchema, options, 'aiGraphcore.nllloss');
    const attributes = {
      reduction: reductionAttribute(o.reduction),
      inputIsLogProbability: o.inputIsLogProbability,
      ...(o.ignoreIndex !== undefined ? { ignoreIndex: o.ignoreIndex } : {}),
    };
    return this.loss('Nll', inputs, attributes, o.debugContext);
  }

  /** `lambda · |x|` of `[x]`, reduced. */
  l1loss(inputs: readonly [TensorId], lambda: number, options: LossOptions = {}): TensorId {
    const o = checkedArgument(lossSchema, options, 'aiGraphcore.l1loss');
    return this.loss('L1', inputs, { lambda: checkedArgument(z.number(), lambda, 'aiGraphcore.l1loss: lambda'), reduction: reductionAttribute(o.reduction) }, o.debugContext);
  }

  /** `x` of `[x]` as a loss, reduced. */
  identityloss(inputs: readonly [TensorId], options: LossOptions = {}): TensorId {
    const o = checkedArgument(lossSchema, options, 'aiGraphcore.identityloss');
    return this.loss('IdentityLoss', inputs, { reduction: reductionAttribute(o.reduction) }, o.debugContext);
  }
}
