/**
 * Which block the model is in while it is traced: the state behind `Block`,
 * `BeginBlock` and `BlockFunction`. Outside tracing, blocks are no-ops, as in
 * PopTorch (a model runs the same in plain tfjs).
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { layerListBlockStarts } from './layer_list_blocks.js';

/** Where a block runs, as given by the user. */
export interface BlockSpec {
  /** The block's id (blocks with the same id are one block); default: the next automatic id. */
  readonly userId?: string;
  /** The IPU the block runs on, unless a `Stage` says otherwise. */
  readonly ipuId?: number;
}

/** The block a node was traced in. */
export interface ActiveBlock {
  readonly userId: string;
  readonly ipuId?: number;
  /** True for blocks opened by `Block` / `BlockFunction` (scopes), false for `BeginBlock` / `Block.start`. */
  readonly scoped: boolean;
}

/** A `BeginBlock` annotation on a layer. */
interface LayerAnnotation {
  readonly spec: BlockSpec;
  /** The order in which the annotations were made. */
  readonly order: number;
}

const layerAnnotations = new WeakMap<tf.layers.Layer, LayerAnnotation>();
let annotationCount = 0;

function checkSpec(spec: BlockSpec, where: string): BlockSpec {
  if (spec === null || typeof spec !== 'object') throw new TypeError(`${where}: expected { userId?, ipuId? }, got ${spec === null ? 'null' : typeof spec}`);
  const { userId, ipuId } = spec;
  if (userId !== undefined && (typeof userId !== 'string' || userId === '')) {
    throw new TypeError(`${where}: userId must be a non-empty string, got ${JSON.stringify(userId)}`);
  }
  if (ipuId !== undefined && !(Number.isInteger(ipuId) && ipuId >= 0)) {
    throw new RangeError(`${where}: ipuId must be a non-negative integer, got ${JSON.stringify(ipuId)}`);
  }
  return { ...(userId !== undefined ? { userId } : {}), ...(ipuId !== undefined ? { ipuId } : {}) };
}

/** @internal Annotates `layer` so that it and what follows it run in the block `spec`. */
export function annotateLayer(layer: tf.layers.Layer, spec: BlockSpec): void {
  if (!(layer instanceof tf.layers.Layer)) {
    throw new TypeError(`BeginBlock: expected a tfjs layer, got ${layer === null ? 'null' : typeof layer}`);
  }
  const checked = checkSpec(spec, `BeginBlock(${layer.name})`);
  if (layerAnnotations.has(layer)) {
    throw new PoptfjsError(`BeginBlock: layer '${layer.name}' is already annotated with BeginBlock; a layer can begin only one block`, {
      type: 'annotation',
      location: layer.name,
    });
  }
  layerAnnotations.set(layer, { spec: checked, order: annotationCount++ });
}

/** @internal Removes the `BeginBlock` annotation of `layer`, if any. */
export function removeLayerAnnotation(layer: tf.layers.Layer): void {
  layerAnnotations.delete(layer);
}

/** @internal The `BeginBlock` annotation of `layer`, if any. */
export function layerAnnotation(layer: tf.layers.Layer): LayerAnnotation | undefined {
  return layerAnnotations.get(layer);
}

/** The block state of one trace. */
export class BlockTrace {
  private autoId = 0;
  private current: ActiveBlock | undefined;
  private lastBeginBlock: { layer: string; order: number } | undefined;
  /** The block of each layer of the traced layers model's list at or after its first annotated layer. */
  private readonly listedBlocks: ReadonlyMap<tf.layers.Layer, ActiveBlock>;
  /** The layers whose BeginBlock annotation took effect. */
  readonly begunLayers = new Set<tf.layers.Layer>();
  /** True once a scoped block (`Block`, `BlockFunction`) was used. */
  usedScopedBlocks = false;

  /**
   * @param layers the layer list of the layers model being traced (depth
   * first), which places its layers by the layer-list rule (see
   * `layer_list_blocks.ts`); blocks without a userId get automatic ids in
   * the list's order. Empty for a function.
   */
  constructor(layers: readonly tf.layers.Layer[]) {
    const starts = layerListBlockStarts(layers, (layer) => layerAnnotations.has(layer));
    const blockOfStart = new Map<tf.layers.Layer, ActiveBlock>();
    for (const start of new Set(starts.values())) blockOfStart.set(start, this.resolve(layerAnnotations.get(start)!.spec, false));
    this.listedBlocks = new Map([...starts].map(([layer, start]) => [layer, blockOfStart.get(start)!]));
  }

  /** The block nodes are traced in now. */
  get active(): ActiveBlock | undefined {
    return this.current;
  }

  /** Restarts automatic block ids at "0" (`Block.useAutoId()`). */
  resetAutoId(): void {
    this.autoId = 0;
  }

  private resolve(spec: BlockSpec, scoped: boolean): ActiveBlock {
    const userId = spec.userId ?? String(this.autoId++);
    return { userId, scoped, ...(spec.ipuId !== undefined ? { ipuId: spec.ipuId } : {}) };
  }

  /** Opens a block that lasts until the next one begins (`Block.start`, `BeginBlock`). */
  begin(spec: BlockSpec): void {
    this.current = this.resolve(spec, false);
  }

  /** Opens a block scope; returns what {@link BlockTrace.closeScope} restores. */
  openScope(spec: BlockSpec): ActiveBlock | undefined {
    const previous = this.current;
    this.current = this.resolve(spec, true);
    this.usedScopedBlocks = true;
    return previous;
  }

  /** Closes a block scope, going back to the block that enclosed it. */
  closeScope(previous: ActiveBlock | undefined): void {
    this.current = previous;
  }

  /** Runs `fn` in a block scope and restores the enclosing block afterwards. */
  scope<T>(spec: BlockSpec, fn: () => T): T {
    const previous = this.openScope(spec);
    try {
      return fn();
    } finally {
      this.closeScope(previous);
    }
  }

  /**
   * Runs `fn`, a call of `layer`. A layer of the layers model's list runs in
   * the block the list gives it, and the enclosing block is back afterwards,
   * so each kernel is in the block of the innermost layer that ran it. Any
   * other layer annotated with `BeginBlock` (one a function applies) opens
   * its block when it first runs, until the next block begins.
   */
  inLayer<T>(layer: tf.layers.Layer, fn: () => T): T {
    const listed = this.listedBlocks.get(layer);
    if (listed === undefined) {
      this.beginAnnotated(layer);
      return fn();
    }
    if (layerAnnotations.has(layer)) this.begunLayers.add(layer);
    const enclosing = this.current;
    this.current = listed;
    try {
      return fn();
    } finally {
      this.current = enclosing;
    }
  }

  /** Opens the block of `layer`'s `BeginBlock` annotation the first time it runs, checking the annotations' order. */
  private beginAnnotated(layer: tf.layers.Layer): void {
    const annotation = layerAnnotations.get(layer);
    if (!annotation || this.begunLayers.has(layer)) return;
    if (this.lastBeginBlock && this.lastBeginBlock.order > annotation.order) {
      throw new PoptfjsError(
        `BeginBlock order contradicts the model's order: layer '${layer.name}' was annotated before layer '${this.lastBeginBlock.layer}' ` +
          `but runs after it; annotate layers with BeginBlock in the order the model runs them`,
        { type: 'annotation', location: layer.name },
      );
    }
    this.lastBeginBlock = { layer: layer.name, order: annotation.order };
    this.begunLayers.add(layer);
    this.begin(annotation.spec);
  }
}

let activeTrace: BlockTrace | undefined;

/** @internal The block state of the trace in progress, if any. */
export function currentBlockTrace(): BlockTrace | undefined {
  return activeTrace;
}

/** @internal Runs `fn` (a trace) with a fresh block state; `layers` is the layer list of a layers model (empty for a function). */
export function withBlockTrace<T>(layers: readonly tf.layers.Layer[], fn: (blocks: BlockTrace) => T): T {
  const previous = activeTrace;
  activeTrace = new BlockTrace(layers);
  try {
    return fn(activeTrace);
  } finally {
    activeTrace = previous;
  }
}

/** @internal Checks a block spec given to Block / BlockFunction. */
export function checkBlockSpec(spec: BlockSpec, where: string): BlockSpec {
  return checkSpec(spec, where);
}
