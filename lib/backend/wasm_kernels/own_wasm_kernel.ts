/**
 * The wasm backend's own registration of a kernel that poptfjs overrides
 * (index.ts): an override's module captures it when loaded, before the
 * override is registered in its place, and calls it for the cases it
 * leaves to the backend.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { PoptfjsError } from '../../common/errors.js';

/** The wasm backend's own kernel `kernelName`, as registered when this was made. */
export class OwnWasmKernel {
  private readonly config: tf.KernelConfig | undefined;

  constructor(private readonly kernelName: string) {
    this.config = tf.getKernel(kernelName, 'wasm');
  }

  /** The registration; an error naming the kernel where the backend has none. */
  get(): tf.KernelConfig {
    if (this.config === undefined) throw new PoptfjsError(`the wasm backend has no '${this.kernelName}' kernel to build on`, { type: 'backend' });
    return this.config;
  }

  /** Runs its setup on `backend`: the override's own setup, which the backend calls in its place. */
  setup(backend: Parameters<tf.KernelSetupFunc>[0]): void {
    this.config?.setupFunc?.(backend);
  }
}
