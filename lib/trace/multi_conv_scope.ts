/**
 * The `ops.MultiConv` scope open while a model runs: the convolutions traced
 * inside it form a group, as PopTorch folds the convolutions of a
 * `poptorch.MultiConv` block into one PopART `MultiConv` op. Each is annotated
 * with the group, its index in it and the group's settings
 * ({@link MultiConvMember}); its backward convolutions (the data and weight
 * gradients, PopART's `MultiConvDataGrad` and `MultiConvWeightsGrad`) take the
 * same annotation when they are traced. Outside tracing a scope groups
 * nothing.
 */
import { PoptfjsError } from '../common/errors.js';
import type { MultiConvMember, MultiConvPlanType, NodeAnnotations, NodeId } from '../ir/graph.js';
import type { GraphBuilder } from '../ir/graph_builder.js';

/** Forward convolution kernels a group takes (plain and fused, 2-D, 3-D and depthwise). */
const FORWARD_CONVOLUTIONS: ReadonlySet<string> = new Set(['Conv2D', 'Conv3D', 'DepthwiseConv2dNative', 'FusedConv2D', 'FusedDepthwiseConv2D']);
/** The kernels of a convolution's data and weight gradients. */
const BACKWARD_CONVOLUTION = /^(Conv2D|Conv3D|DepthwiseConv2dNative)Backprop(Input|Filter)/;

/** What a group sets for its convolutions: per-convolution lists hold one value for all or one per convolution. */
export interface MultiConvSettings {
  readonly planType: MultiConvPlanType;
  readonly perConvReservedTiles: number;
  readonly cycleBackOff: number;
  readonly availableMemoryProportions?: readonly number[];
  readonly partialsTypes?: ReadonlyArray<'float' | 'half'>;
  readonly enableConvDithering?: readonly boolean[];
}

interface OpenGroup {
  /** The graph being traced when the scope opened, and its node count then; undefined outside tracing. */
  readonly builder: GraphBuilder | undefined;
  readonly firstNode: number;
}

let open: OpenGroup | undefined;
const groupCounts = new WeakMap<GraphBuilder, number>();

function scopeError(message: string): PoptfjsError {
  return new PoptfjsError(`MultiConv: ${message}`, { type: 'annotation', location: 'MultiConv' });
}

/** @internal Opens a group over the nodes `builder` (the graph being traced, if any) gets from now on. */
export function openMultiConv(builder: GraphBuilder | undefined): void {
  if (open) throw scopeError('Nested poptorch.MultiConv is not supported: close a MultiConv before opening another');
  open = { builder, firstNode: builder?.nodeCount ?? 0 };
}

/** The setting of convolution `index` from a list of one value for all or one per convolution. */
function perConvolution<T>(values: readonly T[] | undefined, index: number): T | undefined {
  return values === undefined ? undefined : values.length === 1 ? values[0] : values[index];
}

/**
 * @internal Closes the open group. When it was traced, annotates the forward
 * convolutions traced inside it with the group and `settings`; a group
 * without convolutions, or a per-convolution list whose length is neither 1
 * nor the number of convolutions, is an error. `annotate` is false when the
 * scope's function threw: the group is closed without checks.
 */
export function closeMultiConv(settings: MultiConvSettings, annotate: boolean): void {
  const group = open;
  open = undefined;
  const builder = group?.builder;
  if (!annotate || !builder) return;
  const members: NodeId[] = [];
  for (let id = group.firstNode; id < builder.nodeCount; id++) {
    const node = builder.node(id);
    if (node.annotations.pass === 'forward' && FORWARD_CONVOLUTIONS.has(node.kernel)) members.push(id);
  }
  if (members.length === 0) {
    throw scopeError(
      'Unexpected end_multi_conv: no convolution ran inside the scope; a MultiConv groups the convolutions (Conv2D, Conv3D, depthwise and fused ones) run inside it',
    );
  }
  const lists = { availableMemoryProportions: settings.availableMemoryProportions, partialsTypes: settings.partialsTypes, enableConvDithering: settings.enableConvDithering };
  for (const [name, values] of Object.entries(lists)) {
    if (values !== undefined && values.length !== 1 && values.length !== members.length) {
      throw scopeError(`${name} has ${values.length} values but ${members.length} convolution(s) ran inside the scope; give one value for all of them or one per convolution`);
    }
  }
  const number = groupCounts.get(builder) ?? 0;
  groupCounts.set(builder, number + 1);
  members.forEach((id, index) => {
    const proportion = perConvolution(settings.availableMemoryProportions, index);
    const partials = perConvolution(settings.partialsTypes, index);
    const dithering = perConvolution(settings.enableConvDithering, index) === true;
    builder.annotateNode(id, {
      multiConv: {
        group: number,
        index,
        planType: settings.planType,
        perConvReservedTiles: settings.perConvReservedTiles,
        cycleBackOff: settings.cycleBackOff,
        ...(dithering ? { dithering } : {}),
      },
      ...(proportion !== undefined ? { availableMemoryProportion: proportion } : {}),
      ...(partials !== undefined ? { partialsType: partials } : {}),
    });
  });
}

/** The group annotation of a backward node of kernel `kernel` whose forward node has annotations `forward`: the forward convolution's, for its data and weight gradients. */
export function backwardMultiConv(kernel: string, forward: NodeAnnotations | undefined): { multiConv?: MultiConvMember } {
  return forward?.multiConv && BACKWARD_CONVOLUTION.test(kernel) ? { multiConv: forward.multiConv } : {};
}
