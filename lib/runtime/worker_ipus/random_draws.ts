/**
 * Random numbers drawn on the main thread and replayed on a worker IPU.
 *
 * In-process, each random pseudo-kernel (`poptfjs.RandomUniform`, ...) draws
 * from the executable's {@link RandomSource} when its node runs, in schedule
 * order. With worker IPUs the main thread draws the same numbers, in the same
 * order, as it dispatches each work item ({@link drawUnitRandomNumbers}), and
 * the worker's nodes read them back from a {@link ReplayedRandomNumbers}, so
 * the numbers are identical to in-process execution.
 */
import { PoptfjsError } from '../../common/errors.js';
import type { Node } from '../../ir/graph.js';
import { randomDraw } from '../graph_interpreter.js';
import { isRandomNode } from '../../trace/random_distribution.js';
import { RandomSource } from '../../executable/random_source.js';

/** Draws the numbers of the random nodes among `nodes` (a unit's, in run order) from `random`. */
export function drawUnitRandomNumbers(nodes: readonly Node[], random: RandomSource): Float32Array[] {
  return nodes.filter(isRandomNode).map((node) => randomDraw(node)(random));
}

/**
 * A {@link RandomSource} that hands out numbers drawn elsewhere: each
 * `uniform` or `normal` call returns the next array it was given. It cannot
 * make new numbers: executables that need them (stochastic rounding) run
 * in-process.
 */
export class ReplayedRandomNumbers extends RandomSource {
  private queue: Float32Array[] = [];

  /** An empty queue. */
  constructor() {
    super(1);
  }

  /** Queues the numbers of the next work item (any left over from the last one are a bug). */
  load(draws: readonly Float32Array[]): void {
    if (this.queue.length > 0) throw new PoptfjsError(`${this.queue.length} random draw(s) of the previous work item were not used`, { type: 'runtime' });
    this.queue = [...draws];
  }

  /** Forgets queued numbers (after a failed work item). */
  clear(): void {
    this.queue = [];
  }

  private next(n: number): Float32Array {
    const draw = this.queue.shift();
    if (!draw || draw.length !== n) {
      throw new PoptfjsError(`a random pseudo-kernel asked for ${n} number(s), but the main thread drew ${draw ? draw.length : 'none'}`, { type: 'runtime' });
    }
    return draw;
  }

  /** The next queued draw, which must hold `n` numbers (drawn on the main thread as `uniform(n, minval, maxval)`). */
  override uniform(n: number): Float32Array {
    return this.next(n);
  }

  /** The next queued draw, which must hold `n` numbers (drawn on the main thread as `normal(n, mean, stddev, truncated)`). */
  override normal(n: number): Float32Array {
    return this.next(n);
  }

  /** Refused: a worker IPU has no random bits of its own. */
  override nextUint32(): number {
    throw new PoptfjsError('a worker IPU cannot draw random bits of its own (stochastic rounding runs in-process)', { type: 'runtime' });
  }
}
