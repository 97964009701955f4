/**
 * `opts.Jit`: PopTorch's `_JitOptions`, how the model is turned into a graph.
 */
import { getLogger } from '../common/log.js';
import { PoptfjsError } from '../common/errors.js';
import { checkArgument, flag } from '../option_vocabulary/argument_rules.js';
import type { MutationGuard } from '../option_vocabulary/frozen_options.js';

const log = getLogger('options');

/**
 * How the model is turned into a graph; reach it as `opts.Jit`. poptfjs has
 * one way, PopTorch's default since 3.0: it records the kernels the model
 * runs as they reach tfjs's engine, as PopTorch's dispatcher records the ops
 * reaching PyTorch's (`traceModel(false)`). `traceModel(true)`, PopTorch's
 * former `torch.jit.trace`, is refused as PopTorch refuses it.
 */
export class JitOptions {
  readonly #guard: MutationGuard;

  /** @internal `Options` builds its groups; `guard` throws when the options are frozen. */
  constructor(guard: MutationGuard) {
    this.#guard = guard;
  }

  /**
   * PopTorch's deprecated `traceModel`: `false`, the only way poptfjs makes
   * its graph (and PopTorch's default), is accepted with PopTorch's
   * deprecation warning; `true` is an error.
   */
  traceModel(traceModel: boolean): this {
    const where = 'Options.Jit.traceModel';
    this.#guard(where);
    const trace = checkArgument(flag, traceModel, where);
    log.warn(
      `[Deprecated] Do not call options.Jit.traceModel(): options.Jit.traceModel(false) is the default, and true is not supported, therefore this function will be removed`,
    );
    if (trace) {
      throw new PoptfjsError(
        `${where}: options.Jit.traceModel(true) is no longer supported: poptfjs records the kernels the model runs as they reach tfjs's engine, as PopTorch's dispatcher does (traceModel(false), the default); there is no torch.jit.trace to use`,
        { type: 'options' },
      );
    }
    return this;
  }
}
