/**
 * Stochastic gradient descent, with torch.optim.SGD's definition of momentum,
 * dampening, Nesterov momentum and weight decay.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../lib/errors.js';
import { Optimizer, type OptimizerState, type OptimizerTarget } from './optimizer.js';

/** SGD hyper-parameters. */
export interface SGDOptions {
  /** Learning rate (default 0.01). */
  lr?: number;
  /** Momentum factor (default 0). */
  momentum?: number;
  /** Dampening for momentum (default 0). */
  dampening?: number;
  /** Nesterov momentum (default false; needs momentum > 0 and dampening 0). */
  nesterov?: boolean;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay?: number;
}

const DEFAULTS: Required<SGDOptions> = { lr: 0.01, momentum: 0, dampening: 0, nesterov: false, weightDecay: 0 };

/** SGD, as `new optim.SGD(modelOrVariables, { lr: 0.01 })`. */
export class SGD extends Optimizer {
  readonly type = 'SGD';
  /** Learning rate; change it and call `executor.setOptimizer(opt)` to use the new value. */
  lr: number;
  /** Momentum factor. */
  momentum: number;
  /** Dampening for momentum. */
  dampening: number;
  /** Nesterov momentum. */
  nesterov: boolean;
  /** L2 penalty. */
  weightDecay: number;

  constructor(target: OptimizerTarget, options: SGDOptions = {}) {
    super(target);
    for (const key of Object.keys(options)) {
      if (!(key in DEFAULTS)) {
        throw new PoptfjsError(`optim.SGD: unknown option '${key}'; expected ${Object.keys(DEFAULTS).join(', ')}`, { type: 'optimizer' });
      }
    }
    const o = { ...DEFAULTS, ...options };
    for (const key of ['lr', 'momentum', 'dampening', 'weightDecay'] as const) {
      if (typeof o[key] !== 'number' || !Number.isFinite(o[key]) || o[key] < 0) {
        throw new PoptfjsError(`optim.SGD: ${key} must be a finite number >= 0, got ${String(o[key])}`, { type: 'optimizer' });
      }
    }
    if (o.nesterov && (o.momentum <= 0 || o.dampening !== 0)) {
      throw new PoptfjsError('optim.SGD: Nesterov momentum requires momentum > 0 and dampening 0', { type: 'optimizer' });
    }
    this.lr = o.lr;
    this.momentum = o.momentum;
    this.dampening = o.dampening;
    this.nesterov = o.nesterov;
    this.weightDecay = o.weightDecay;
  }

  override hyperParameters(): Record<string, number | boolean> {
    return { lr: this.lr, momentum: this.momentum, dampening: this.dampening, nesterov: this.nesterov, weightDecay: this.weightDecay };
  }

  override initialState(): OptimizerState {
    return { step: 0, slots: new Map() };
  }

  override apply(
    weights: ReadonlyMap<string, tf.Tensor>,
    grads: ReadonlyMap<string, tf.Tensor>,
    state: OptimizerState,
  ): Map<string, tf.Tensor> {
    const updated = new Map<string, tf.Tensor>();
    for (const [name, grad] of grads) {
      const w = weights.get(name)!;
      const slots = state.slots.get(name) ?? {};
      const result = tf.tidy(() => {
        let g = this.weightDecay !== 0 ? tf.add(grad, tf.mul(w, this.weightDecay)) : grad;
        let momentum: tf.Tensor | undefined;
        if (this.momentum !== 0) {
          const previous = slots.momentum;
          momentum = previous ? tf.add(tf.mul(previous, this.momentum), tf.mul(g, 1 - this.dampening)) : tf.clone(g);
          g = this.nesterov ? tf.add(g, tf.mul(momentum, this.momentum)) : momentum;
        }
        const next = tf.sub(w, tf.mul(g, this.lr));
        return momentum ? { next, momentum } : { next };
      });
      if (result.momentum) {
        slots.momentum?.dispose();
        slots.momentum = result.momentum;
        state.slots.set(name, slots);
      }
      updated.set(name, result.next);
    }
    state.step++;
    return updated;
  }
}
