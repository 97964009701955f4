/**
 * The gradient sum across instances ({@link InstanceGradients}) on MPI: the
 * gradients of a step are packed into one float32 buffer on a
 * `SharedArrayBuffer`, summed over every instance with one `MPI_Allreduce`
 * on the MPI thread (the training step waits for it), and unpacked. Before
 * that, the instances tell each other whether their part of the iteration
 * failed, with an all-reduce of one status per instance (see
 * iteration_failure.ts).
 */
import * as tf from '@tensorflow/tfjs';
import type { InstanceGradients } from '../runtime/instance_gradients.js';
import { iterationFailure, iterationStatus } from './iteration_failure.js';
import type { MpiCommunicator } from './mpi_communicator.js';

/** Sums gradients over the processes of `MPI_COMM_WORLD`. */
export class MpiInstanceGradients implements InstanceGradients {
  /** Sums over the processes of `world`. */
  constructor(private readonly world: MpiCommunicator) {}

  /** The number of processes: MPI's world size. */
  get instances(): number {
    return this.world.size;
  }

  /** Sums `values` over every process with one `MPI_Allreduce`, blocking until it is done. */
  sumAcrossInstances(values: readonly tf.Tensor[]): tf.Tensor[] {
    const total = values.reduce((n, t) => n + t.size, 0);
    const packed = new Float32Array(new SharedArrayBuffer(4 * total));
    let offset = 0;
    for (const t of values) {
      packed.set(t.dataSync() as Float32Array, offset);
      offset += t.size;
    }
    this.world.allReduceSumSync(packed);
    offset = 0;
    return values.map((t) => {
      const sum = tf.tensor(packed.slice(offset, offset + t.size), t.shape, 'float32');
      offset += t.size;
      return sum;
    });
  }

  /** Sums every instance's status for the iteration with one `MPI_Allreduce` and throws this instance's error for it when any failed. */
  checkIteration(iteration: number, failure: { readonly error: unknown } | undefined): void {
    const statuses = new Float32Array(new SharedArrayBuffer(4 * this.world.size));
    statuses[this.world.rank] = iterationStatus(failure);
    this.world.allReduceSumSync(statuses);
    const error = iterationFailure(statuses, iteration, failure);
    if (error) throw error;
  }
}
