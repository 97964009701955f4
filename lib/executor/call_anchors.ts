/**
 * The tensors anchored with `Options.anchorTensor` at an executor's last
 * call, by short name: kept until the next call replaces them, and read as
 * copies the caller owns.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import type { Executable } from '../executable/executable.js';

/** The anchored tensors of the last call, by short name. */
export class CallAnchors {
  private anchored = new Map<string, tf.Tensor>();

  /** Replaces the anchored tensors with those of a new call (none when it anchored none), disposing the old ones. */
  replace(anchors: Map<string, tf.Tensor> | undefined): void {
    tf.dispose([...this.anchored.values()]);
    this.anchored = anchors ?? new Map();
  }

  /**
   * A copy of the tensor anchored as `shortName` at the last call; an error
   * naming the anchors of `executable` before the first call or for a name
   * not anchored.
   */
  get(shortName: string, executable: Executable): tf.Tensor {
    const value = this.anchored.get(shortName);
    if (value === undefined) {
      const names = (executable.anchors ?? []).map((a) => `'${a.name}'`);
      const why = names.includes(`'${shortName}'`)
        ? 'the model has not run yet'
        : `no tensor is anchored as '${shortName}'; anchored: ${names.length > 0 ? names.join(', ') : 'none (Options.anchorTensor)'}`;
      throw new PoptfjsError(`getAnchoredTensor('${shortName}'): ${why}`, { type: 'executor' });
    }
    return tf.clone(value);
  }

  /** Disposes the anchored tensors. */
  dispose(): void {
    tf.dispose([...this.anchored.values()]);
    this.anchored.clear();
  }
}
