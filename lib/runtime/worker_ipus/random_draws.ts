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
import { PoptfjsError } from '../../errors.js';
import type { Node } from '../../ir/graph.js';
import { RANDOM_KERNELS } from '../../trace/random_distribution.js';
import { RandomSource } from '../random_source.js';

/** True for the random pseudo-kernels, which draw from the run's generator. */
export function isRandomNode(node: Node): boolean {
  return node.kernel.startsWith('poptfjs.');
}

/** The numbers one random pseudo-kernel draws: the same calls the interpreter's random runner makes. */
function drawNode(node: Node, random: RandomSource): Float32Array {
  const shape = node.attrs.shape as number[];
  const n = shape.reduce((a, b) => a * b, 1);
  switch (node.kernel) {
    case RANDOM_KERNELS.randomUniform: {
      const { minval, maxval } = node.attrs as { minval: number; maxval: number };
      return random.uniform(n, minval, maxval);
    }
    case RANDOM_KERNELS.randomNormal:
    case RANDOM_KERNELS.truncatedNormal: {
      const { mean, stddev } = node.attrs as { mean: number; stddev: number };
      return random.normal(n, mean, stddev, node.kernel === RANDOM_KERNELS.truncatedNormal);
    }
    default:
      throw new PoptfjsError(`unknown poptfjs kernel ${node.kernel} (node #${node.id})`, { type: 'runtime' });
  }
}

/** Draws the numbers of the random nodes among `nodes` (a unit's, in run order) from `random`. */
export function drawUnitRandomNumbers(nodes: readonly Node[], random: RandomSource): Float32Array[] {
  return nodes.filter(isRandomNode).map((node) => drawNode(node, random));
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
