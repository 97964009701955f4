/**
 * The optimizer attribute values a model was compiled with, and the check
 * `setOptimizer` makes against them: a constant attribute cannot change
 * without recompiling (PopTorch embeds it in the program), a variable one
 * can. Attributes that choose the optimizer's algorithm or precisions
 * (`useCombinedAccum`, `accumType`, `biasCorrection`, ...) are always constant.
 */
import type { Optimizer, OptimizerSettings } from './optimizer.js';
import { type HyperValue, optimizerError, sameHyperValue } from './optimizer_options.js';

function show(value: HyperValue): string {
  return Array.isArray(value) ? `[${value.join(', ')}]` : String(value);
}

/** What an executor compiled its optimizer with. */
export class CompiledOptimizerAttributes {
  private readonly settings: OptimizerSettings;
  private readonly variable: ReadonlySet<string>;

  constructor(optimizer: Optimizer) {
    this.settings = optimizer.settings();
    this.variable = new Set(optimizer.variableAttrs.variableNames());
  }

  /** Throws if `next` changes something the compiled program holds as a constant; returns its settings otherwise. */
  check(next: Optimizer): OptimizerSettings {
    const compiled = this.settings;
    if (next.type !== compiled.type) {
      throw optimizerError(
        `setOptimizer: the model was compiled with an optim.${compiled.type}; it cannot switch to an optim.${next.type} without recompiling (destroy() this executor and wrap the model again)`,
      );
    }
    const settings = next.settings();
    const groups = (s: OptimizerSettings) => s.groupParams.map((names) => `[${names.join(', ')}]`).join(', ');
    if (groups(settings) !== groups(compiled)) {
      throw optimizerError(`setOptimizer: the parameter groups changed from ${groups(compiled)} to ${groups(settings)}; that needs recompiling`);
    }
    const constant = (attribute: string, where: string, before: HyperValue, after: HyperValue) => {
      if (sameHyperValue(before, after)) return;
      throw optimizerError(
        `setOptimizer: '${attribute}'${where} is a constant attribute compiled into the program (${show(before)}, now ${show(after)}); ` +
          `mark it variable before compiling (opt.variableAttrs.markAsVariable('${attribute}')) or pass it to the optimizer's constructor, or wrap the model again to recompile`,
      );
    };
    for (const [key, before] of Object.entries(compiled.global)) {
      if (!this.variable.has(key)) constant(key, '', before, settings.global[key]!);
    }
    compiled.groups.forEach((group, g) => {
      const where = compiled.groups.length > 1 ? ` of paramGroups[${g}]` : '';
      for (const [key, before] of Object.entries(group)) if (!this.variable.has(key)) constant(key, where, before, settings.groups[g]![key]!);
    });
    return settings;
  }
}
