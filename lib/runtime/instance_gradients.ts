/**
 * The gradient sum across the instances of a multi-instance run (PopRun's
 * data parallelism over several processes): after each instance has reduced
 * its gradients over its own replicas, they are summed over every instance,
 * so every instance applies the same update, the one a single process with
 * all the instances' replicas would. The runtime only sees this interface;
 * the distributed layer implements it on MPI.
 */
import type * as tf from '@tensorflow/tfjs';

/** Sums gradients over the instances of a run. */
export interface InstanceGradients {
  /** How many instances the run has: the total replication factor is this times each instance's. */
  readonly instances: number;
  /**
   * Sums each tensor over every instance, element by element, blocking until
   * done. Every instance passes tensors of the same shapes in the same order;
   * the sums come back in that order (new tensors, owned by the caller).
   */
  sumAcrossInstances(values: readonly tf.Tensor[]): tf.Tensor[];
  /**
   * Every instance says whether its part of device iteration `iteration`
   * failed (`failure` holds what it threw) before the gradients are summed,
   * blocking until all have said: then a step that failed on one instance
   * fails on every instance, at the same iteration, and none waits for the
   * failed one's gradients. Returns when none failed; else throws the error
   * this instance raises for the step.
   */
  checkIteration(iteration: number, failure: { readonly error: unknown } | undefined): void;
}
