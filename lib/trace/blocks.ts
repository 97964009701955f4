/**
 * Annotating models with blocks, PopTorch's `Block`, `BeginBlock`,
 * `BlockFunction` and `removeBlocks`. A block is a part of the model that
 * runs on one IPU; blocks are grouped into stages and phases by the
 * execution strategy. Outside tracing, blocks do nothing.
 *
 * ```ts
 * Block.useAutoId();
 * Block.run({ ipuId: 0 }, () => { x = dense1.apply(x); });   // block "0" on IPU 0
 * { using _ = new Block({ ipuId: 1 }); x = dense2.apply(x); } // block "1" on IPU 1
 * BeginBlock(model.layers[2], { ipuId: 2 });                  // layer 2 onwards on IPU 2
 * ```
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { annotateLayer, checkBlockSpec, currentBlockTrace, removeLayerAnnotation, type BlockSpec } from './block_scope.js';
import { allLayers, isLayersModel, type WrappableModel } from './model_function.js';

export type { BlockSpec } from './block_scope.js';

/**
 * A block scope. Use {@link Block.run}, or `using _ = new Block({ ipuId })`
 * to end the block at the end of the enclosing scope.
 */
export class Block implements Disposable {
  private close: (() => void) | undefined;

  /** Opens a block until this object is disposed (`using _ = new Block({ ipuId: 1 })`). */
  constructor(spec: BlockSpec = {}) {
    const checked = checkBlockSpec(spec, 'Block');
    const trace = currentBlockTrace();
    if (trace) {
      const previous = trace.openScope(checked);
      this.close = () => trace.closeScope(previous);
    }
  }

  /** Ends the block opened by the constructor. */
  [Symbol.dispose](): void {
    this.close?.();
    this.close = undefined;
  }

  /** Runs `fn` inside a block (everything it traces runs on the block's IPU). */
  static run<T>(spec: BlockSpec, fn: () => T): T {
    const checked = checkBlockSpec(spec, 'Block.run');
    const trace = currentBlockTrace();
    return trace ? trace.scope(checked, fn) : fn();
  }

  /** Restarts automatic block ids: blocks without a userId get "0", "1", ... in order. */
  static useAutoId(): void {
    currentBlockTrace()?.resetAutoId();
  }

  /** Starts a block that lasts until the next block starts (like `BeginBlock` inside a model's code). */
  static start(spec: BlockSpec = {}): void {
    currentBlockTrace()?.begin(checkBlockSpec(spec, 'Block.start'));
  }
}

/**
 * Places everything from `layer` on (until the next annotation) in a block.
 * In a wrapped layers model "from on" follows the layer list the user
 * annotates, whatever order tfjs runs the layers in: each layer belongs to
 * the block of the nearest annotated layer at or before it in `model.layers`
 * (the layers of a nested model right after it, depth first). A layer a
 * function applies begins its block when it first runs. Returns the layer.
 * An error if the layer is already annotated.
 */
export function BeginBlock<L extends tf.layers.Layer>(layer: L, spec: BlockSpec = {}): L {
  annotateLayer(layer, spec);
  return layer;
}

/**
 * Wraps a function (or decorates a method) so that it runs in a block:
 * `const f = BlockFunction({ ipuId: 1 })((x) => ...)` or `@BlockFunction({ ipuId: 1 })`.
 */
export function BlockFunction(spec: BlockSpec = {}) {
  const checked = checkBlockSpec(spec, 'BlockFunction');
  return function <F extends (...args: never[]) => unknown>(fn: F, _context?: unknown): F {
    if (typeof fn !== 'function') throw new TypeError(`BlockFunction: expected a function to wrap, got ${typeof fn}`);
    const wrapped = function (this: unknown, ...args: Parameters<F>) {
      return Block.run(checked, () => fn.apply(this, args));
    };
    return wrapped as unknown as F;
  };
}

/** Removes every `BeginBlock` annotation from the layers of `model`. */
export function removeBlocks(model: WrappableModel): void {
  if (!isLayersModel(model)) {
    throw new PoptfjsError('removeBlocks: expected a tf.LayersModel (functions carry their blocks in their code)', { type: 'annotation' });
  }
  for (const layer of allLayers(model)) removeLayerAnnotation(layer);
}
