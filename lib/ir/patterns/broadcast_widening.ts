/**
 * The `BroadcastWidening` pattern: on the wasm backend, an `Add`, `Sub`,
 * `Multiply` or `RealDiv` of a large float32 tensor `[..., W, C]` and a
 * narrow vector broadcast along its last axis (`[C]`, or `[1, ..., 1, C]`:
 * a bias, a per-channel scale) becomes the same kernel on the tensor seen as
 * rows of `W·C` elements and the vector tiled `W` times, between two
 * `Reshape`s.
 *
 * XNNPACK broadcasts the vector one row at a time, so narrow rows cost a
 * kernel call each. Measured on wasm: [64,28,28,16] + [16] 0.93 ms as it is,
 * 0.27 ms widened (the bias add of a small CNN's first convolution);
 * [64,56,56,8] + [8] 3.6 against 0.5 ms; [64,14,14,32] + [32] 0.29 against
 * 0.16 ms; at 64 channels both take the same time, and rows much wider than
 * a few thousand elements are slower again. The numbers are unchanged:
 * the same element pairs meet.
 */
import type { Node, ValueId } from '../graph.js';
import { GraphEditor } from './graph_editor.js';
import type { Pattern } from './pattern.js';

/** The backends whose broadcasting binary kernels are slow on narrow rows. */
const SLOW_NARROW_BROADCAST: ReadonlySet<string> = new Set(['wasm']);

/** The binary kernels rewritten (XNNPACK's on wasm), with their input names. */
const BINARY_KERNELS: ReadonlySet<string> = new Set(['Add', 'Sub', 'Multiply', 'RealDiv']);

/** The widest last axis worth widening (rows are wider, so a widened kernel is not widened again). */
const MAX_CHANNELS = 32;
/** The widest row built. */
const MAX_ROW = 4096;
/** The fewest elements of the large operand. */
const MIN_ELEMENTS = 16384;

const product = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1);

/** How a node is widened: which input is the vector, and the rows of the other. */
interface Widening {
  readonly vectorInput: number;
  readonly rows: number;
  /** `W`: how many times the vector is tiled into a row. */
  readonly reps: number;
}

/** True if `shape` is `[C]` or `[1, ..., 1, C]`, no longer than `rank`. */
function isLastAxisVector(shape: readonly number[], channels: number, rank: number): boolean {
  return shape.length >= 1 && shape.length <= rank && shape[shape.length - 1] === channels && product(shape) === channels;
}

function widening(editor: GraphEditor, node: Node): Widening | undefined {
  if (!BINARY_KERNELS.has(node.kernel) || node.inputs.length !== 2) return undefined;
  const out = editor.value(node.outputs[0]!);
  const rank = out.shape.length;
  if (out.dtype !== 'float32' || rank < 2 || product(out.shape) < MIN_ELEMENTS) return undefined;
  const channels = out.shape[rank - 1]!;
  const row = out.shape[rank - 2]! * channels;
  if (channels > MAX_CHANNELS || row <= MAX_CHANNELS || row > MAX_ROW) return undefined;
  const shapes = node.inputs.map((id) => editor.value(id).shape);
  const vectorInput = shapes.findIndex((s, i) => isLastAxisVector(s, channels, rank) && product(shapes[1 - i]!) === product(out.shape));
  if (vectorInput < 0 || editor.value(node.inputs[vectorInput]!).dtype !== 'float32') return undefined;
  return { vectorInput, rows: product(out.shape) / row, reps: out.shape[rank - 2]! };
}

function widen(editor: GraphEditor, node: Node, { vectorInput, rows, reps }: Widening): void {
  const out = editor.value(node.outputs[0]!);
  const channels = out.shape[out.shape.length - 1]!;
  const emit = (kernel: string, inputNames: string[], inputs: ValueId[], attrs: Record<string, number[]>, shape: readonly number[]): ValueId =>
    editor.insertBefore(node.id, { kernel, inputNames, inputs, attrs, outputs: [{ shape, dtype: 'float32' }] })[0]!;
  const vector = emit('Reshape', ['x'], [node.inputs[vectorInput]!], { shape: [channels] }, [channels]);
  const row = emit('Tile', ['x'], [vector], { reps: [reps] }, [reps * channels]);
  const matrix = emit('Reshape', ['x'], [node.inputs[1 - vectorInput]!], { shape: [rows, reps * channels] }, [rows, reps * channels]);
  const inputs = vectorInput === 1 ? [matrix, row] : [row, matrix];
  const result = emit(node.kernel, node.inputNames ? [...node.inputNames] : ['a', 'b'], inputs, {}, [rows, reps * channels]);
  editor.removeNode(node.id, [emit('Reshape', ['x'], [result], { shape: [...out.shape] }, out.shape)]);
}

/** Widens narrow last-axis broadcasts of binary kernels to whole rows, where that is faster (wasm). */
export const broadcastWidening: Pattern = {
  name: 'BroadcastWidening',
  description:
    'widens a narrow last-axis vector (a bias) of Add/Sub/Multiply/RealDiv on a large tensor to whole rows, Reshape + Tile, on backends where that is faster (wasm)',
  level: 'Default',
  apply(graph, context) {
    if (!SLOW_NARROW_BROADCAST.has(context.backend)) return { graph, count: 0 };
    const editor = new GraphEditor(graph);
    let count = 0;
    for (const node of editor.liveNodes()) {
      const plan = widening(editor, node);
      if (plan === undefined) continue;
      widen(editor, node, plan);
      count++;
    }
    return { graph: count > 0 ? editor.build() : graph, count };
  },
};
