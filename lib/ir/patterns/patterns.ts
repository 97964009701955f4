/**
 * PopART-style pattern selection and application.
 *
 * {@link Patterns} says which rewrites run: a level (`NoPatterns`, `Minimal`,
 * `Default`, `All`) enables every pattern up to that level, and
 * {@link Patterns.enablePattern} switches single patterns on or off by name.
 * {@link applyPatterns} runs the enabled patterns over a graph, round after
 * round, until a round changes nothing; `DeadCodeElimination` ends each
 * round, so the result is pruned whenever it is enabled.
 */
import { PoptfjsError } from '../../common/errors.js';
import { getLogger } from '../../common/log.js';
import type { Graph } from '../graph.js';
import { ALL_PATTERNS } from './all_patterns.js';
import { graphSignature } from './graph_signature.js';
import { PATTERNS_LEVELS, type Pattern, type PatternContext, type PatternsLevel } from './pattern.js';

/** The most rounds {@link applyPatterns} runs before it stops looking for a fixed point. */
export const MAX_PATTERN_ROUNDS = 10;

const log = getLogger('pattern');

function levelRank(level: PatternsLevel): number {
  return PATTERNS_LEVELS.indexOf(level);
}

/** Which patterns are enabled. */
export class Patterns {
  /** The level this set started from. */
  readonly level: PatternsLevel;
  private readonly enabled = new Set<string>();

  /** Enables every pattern whose level is at most `level`. */
  constructor(level: PatternsLevel = 'Default') {
    if (!PATTERNS_LEVELS.includes(level)) {
      throw new PoptfjsError(`unknown patterns level '${String(level)}'; expected one of ${PATTERNS_LEVELS.join(', ')}`, { type: 'options' });
    }
    this.level = level;
    for (const pattern of ALL_PATTERNS) if (levelRank(pattern.level) <= levelRank(level)) this.enabled.add(pattern.name);
  }

  /** Every pattern poptfjs knows (name, description, level), in run order. */
  static knownPatterns(): readonly Pattern[] {
    return ALL_PATTERNS;
  }

  /** Switches the pattern `name` on or off; throws for an unknown name. Returns this set. */
  enablePattern(name: string, enabled: boolean): this {
    checkPatternName(name);
    if (enabled) this.enabled.add(name);
    else this.enabled.delete(name);
    return this;
  }

  /** True if the pattern `name` is enabled; throws for an unknown name. */
  isPatternEnabled(name: string): boolean {
    checkPatternName(name);
    return this.enabled.has(name);
  }

  /** The names of the enabled patterns, in run order. */
  enabledPatterns(): string[] {
    return ALL_PATTERNS.filter((p) => this.enabled.has(p.name)).map((p) => p.name);
  }
}

function checkPatternName(name: string): void {
  if (ALL_PATTERNS.some((p) => p.name === name)) return;
  throw new PoptfjsError(`unknown pattern '${name}'; known patterns: ${ALL_PATTERNS.map((p) => p.name).join(', ')}`, {
    type: 'options',
    location: 'Patterns',
  });
}

/** A graph after {@link applyPatterns}, with how often each pattern fired. */
export interface AppliedPatterns {
  readonly graph: Graph;
  /** Patterns that fired at least once, by name, with their total count. */
  readonly fired: Map<string, number>;
}

/**
 * Runs the enabled patterns over `graph` until a round changes nothing (at
 * most {@link MAX_PATTERN_ROUNDS} rounds). `graph` is not modified. Throws if
 * a pattern changes the graph's signature (its inputs' or roles' types).
 */
export function applyPatterns(graph: Graph, patterns: Patterns, context: PatternContext): AppliedPatterns {
  const active = ALL_PATTERNS.filter((p) => patterns.isPatternEnabled(p.name));
  const signature = graphSignature(graph);
  const fired = new Map<string, number>();
  let current = graph;
  for (let round = 1; round <= MAX_PATTERN_ROUNDS; round++) {
    let changes = 0;
    for (const pattern of active) {
      const result = pattern.apply(current, context);
      if (result.graph !== current && graphSignature(result.graph) !== signature) {
        throw new PoptfjsError(`pattern ${pattern.name} changed the graph's signature from ${signature} to ${graphSignature(result.graph)}`, {
          type: 'compile',
          location: pattern.name,
        });
      }
      if (result.count > 0) fired.set(pattern.name, (fired.get(pattern.name) ?? 0) + result.count);
      changes += result.count;
      current = result.graph;
    }
    if (changes === 0) break;
    if (round === MAX_PATTERN_ROUNDS) log.warn(`patterns still rewrote the graph after ${round} rounds; stopping there`);
  }
  log.debug(
    () =>
      `patterns (${context.backend}, ${context.training ? 'training' : 'inference'}): ${
        fired.size > 0 ? [...fired].map(([name, n]) => `${name} ×${n}`).join(', ') : 'nothing fired'
      }`,
  );
  return { graph: current, fired };
}

/** The patterns an `Options.patterns` setting asks for: a level and overrides by name. */
export function patternsFromSetting(setting: { readonly level: PatternsLevel; readonly overrides: Readonly<Record<string, boolean>> }): Patterns {
  const patterns = new Patterns(setting.level);
  for (const [name, enabled] of Object.entries(setting.overrides)) patterns.enablePattern(name, enabled);
  return patterns;
}
