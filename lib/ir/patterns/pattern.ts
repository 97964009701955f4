/**
 * What a pattern is: a named, switchable IR→IR rewrite that keeps the
 * numbers the same (within float tolerance), as in PopART.
 */
import type { Graph } from '../graph.js';

/** The pattern levels, from none to every pattern, as in PopART's `PatternsLevel`. */
export const PATTERNS_LEVELS = ['NoPatterns', 'Minimal', 'Default', 'All'] as const;

/** A pattern level: `Minimal` ⊂ `Default` ⊂ `All`; `NoPatterns` enables none. */
export type PatternsLevel = (typeof PATTERNS_LEVELS)[number];

/** What a pattern may base its decisions on. */
export interface PatternContext {
  /** The tfjs backend the graph will run on (`wasm`, `cpu`, `tensorflow`, ...). */
  readonly backend: string;
  /** True for a training-step graph (forward and backward pass). */
  readonly training: boolean;
}

/** The outcome of applying a pattern once. */
export interface PatternResult {
  /** The rewritten graph (the input graph itself when nothing fired). */
  readonly graph: Graph;
  /** How many times the pattern fired. */
  readonly count: number;
}

/** A named graph rewrite. */
export interface Pattern {
  /** The name used to switch the pattern on and off, e.g. `TransposedMatMul`. */
  readonly name: string;
  /** One line on what the pattern rewrites. */
  readonly description: string;
  /** The lowest level that enables the pattern. */
  readonly level: Exclude<PatternsLevel, 'NoPatterns'>;
  /** Rewrites every match in `graph` once; never modifies `graph`. */
  apply(graph: Graph, context: PatternContext): PatternResult;
}
