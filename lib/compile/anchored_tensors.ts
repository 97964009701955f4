/**
 * Tensors anchored with `Options.anchorTensor`, found in the compiled graph
 * (the one `executor.irText()` prints) and returned after each call as
 * PopTorch's anchors are. A tensor is named, as `longName`:
 * - by its value in `irText()`: `%12`;
 * - by the layer that makes it: the layer name `irText()` shows after `#`
 *   (`dense_Dense1`) names the layer's output, the last value its forward
 *   pass makes;
 * - as PopART names gradients: `Gradient___<weight name>`, the gradient of the
 *   (scaled) loss with respect to that weight, per micro-batch;
 * - as PopART names updated weights: `UpdatedVar___<weight name>`, the
 *   weight after the optimizer step, once per device iteration (the runtime
 *   reads it after the update; the graph output stands for it);
 * - `finalLossScale`: the loss scale the step used (with automatic loss
 *   scaling, the one it had reached);
 * - by the name of a weight (its value as the step reads it), of an input
 *   (`input0`, or a layers model's input name), or `loss`, the loss of a
 *   training graph.
 * Anchored values become graph outputs after the model's own (and so stay
 * live until their micro-batch ends), and go to the host with the outputs.
 */
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import type { Graph, ValueId } from '../ir/graph.js';
import type { AnchoredTensor } from '../options/options_settings.js';
import type { ExecutableAnchor } from '../executable/executable.js';
import type { ResolvedOutputMode } from '../executable/output_mode.js';
import { FINAL_LOSS_SCALE, GRADIENT_PREFIX, UPDATED_VARIABLE_PREFIX, updatedWeightOf } from '../executable/anchor_names.js';

const log = getLogger('poptfjs');

/** How PopTorch's debug log names each output mode of an anchor (`Gradient___fc2.bias EVERYN/4`). */
const MODE_LABELS: Readonly<Record<ResolvedOutputMode, string>> = { All: 'ALL', EveryN: 'EVERYN', Final: 'FINAL', Sum: 'Sum' };

/** A graph whose outputs end with the anchored values, and the anchors in that order. */
export interface AnchoredGraph {
  readonly graph: Graph;
  readonly anchors: readonly ExecutableAnchor[];
}

/** The output of each layer: the last value its forward nodes make, by layer name. */
function layerOutputs(graph: Graph): Map<string, ValueId> {
  const outputs = new Map<string, ValueId>();
  for (const node of graph.nodes) {
    const layer = node.annotations.layer;
    if (layer !== undefined && node.annotations.pass === 'forward' && !node.annotations.loss && node.outputs.length > 0) outputs.set(layer, node.outputs[0]!);
  }
  return outputs;
}

/** The weights and inputs of the graph by name, and `loss` when it has one. */
function namedValues(graph: Graph): Map<string, ValueId> {
  const named = new Map<string, ValueId>();
  for (const v of graph.values) if (v.source.kind === 'param' || v.source.kind === 'input') named.set(v.source.name, v.id);
  if (graph.roles.loss !== undefined) named.set(LOSS_NAME, graph.roles.loss);
  return named;
}

/** The name of the loss of a training graph. */
const LOSS_NAME = 'loss';

function resolve(graph: Graph, longName: string, layers: ReadonlyMap<string, ValueId>): ValueId | undefined {
  const id = /^%(\d+)$/.exec(longName);
  if (id) return Number(id[1]) < graph.values.length ? Number(id[1]) : undefined;
  if (longName.startsWith(GRADIENT_PREFIX)) return graph.roles.gradients?.[longName.slice(GRADIENT_PREFIX.length)];
  const updated = updatedWeightOf(longName);
  if (updated !== undefined) return graph.roles.gradients?.[updated] === undefined ? undefined : namedValues(graph).get(updated);
  if (longName === FINAL_LOSS_SCALE) return graph.roles.lossScale;
  return layers.get(longName) ?? namedValues(graph).get(longName);
}

/**
 * Every name `Options.anchorTensor` takes in `graph`, as PopTorch's
 * `getTensorNames()` lists the tensors of the compiled graph: its inputs and
 * weights by name, `loss`, the layers' outputs, the gradients
 * (`Gradient___<weight>`), the updated weights (`UpdatedVar___<weight>`),
 * `finalLossScale` in a training graph, then every value (`%0`, `%1`, ...).
 */
export function tensorNames(graph: Graph): string[] {
  return [
    ...namedValues(graph).keys(),
    ...layerOutputs(graph).keys(),
    ...Object.keys(graph.roles.gradients ?? {}).map((w) => GRADIENT_PREFIX + w),
    ...Object.keys(graph.roles.gradients ?? {}).map((w) => UPDATED_VARIABLE_PREFIX + w),
    ...(graph.roles.lossScale === undefined ? [] : [FINAL_LOSS_SCALE]),
    ...graph.values.map((v) => `%${v.id}`),
  ];
}

function quoted(names: readonly string[]): string {
  return names.length === 0 ? 'none' : names.map((n) => `'${n}'`).join(', ');
}

/**
 * Appends the values of `anchored` to the graph's outputs. An anchor without
 * an output mode takes the model's (`modelMode`); `EveryN` needs a period that
 * divides `deviceIterations`. A name the graph does not have is an error
 * listing the names it has.
 */
export function anchorTensors(
  graph: Graph,
  anchored: Readonly<Record<string, AnchoredTensor>>,
  model: { readonly outputMode: ResolvedOutputMode; readonly outputReturnPeriod: number; readonly deviceIterations: number },
): AnchoredGraph {
  const entries = Object.entries(anchored);
  if (entries.length === 0) return { graph, anchors: [] };
  const layers = layerOutputs(graph);
  const values: ValueId[] = [];
  const anchors = entries.map(([name, anchor]): ExecutableAnchor => {
    const where = `Options.anchorTensor('${name}', '${anchor.longName}')`;
    const value = resolve(graph, anchor.longName, layers);
    if (value === undefined) {
      throw new PoptfjsError(
        `${where}: the compiled graph has no tensor '${anchor.longName}'; name a value of executor.irText() (%0 to %${graph.values.length - 1}), ` +
          `a layer's output by its name (${quoted([...layers.keys()])}), a gradient (${quoted(Object.keys(graph.roles.gradients ?? {}).map((w) => GRADIENT_PREFIX + w))}), ` +
          `an updated weight (UpdatedVar___<weight>) or finalLossScale in a training graph`,
        { type: 'options' },
      );
    }
    const outputMode = anchor.outputMode === undefined || anchor.outputMode === 'Default' ? model.outputMode : anchor.outputMode;
    const outputReturnPeriod = anchor.outputMode === undefined || anchor.outputMode === 'Default' ? model.outputReturnPeriod : anchor.outputReturnPeriod;
    if (outputMode === 'EveryN' && model.deviceIterations % outputReturnPeriod !== 0) {
      throw new PoptfjsError(
        `${where}: OutputMode.EveryN with period ${outputReturnPeriod} returns every ${outputReturnPeriod}-th device iteration, so deviceIterations (${model.deviceIterations}) must be a multiple of ${outputReturnPeriod}`,
        { type: 'options' },
      );
    }
    values.push(value);
    log.debug(`anchored tensor '${name}': ${anchor.longName} ${MODE_LABELS[outputMode]}/${outputMode === 'EveryN' ? outputReturnPeriod : 1}`);
    return { name, longName: anchor.longName, outputMode, outputReturnPeriod };
  });
  return { graph: { ...graph, roles: { ...graph.roles, outputs: [...graph.roles.outputs, ...values] } }, anchors };
}
