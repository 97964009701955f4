/**
 * The IR in a readable text form, one node per line:
 *
 * ```
 * graph(%0: float32[2,10] input0, %1: float32[] lossScale)
 *   %2: float32[10,10] = param "dense_Dense1/kernel" trainable
 *   %4: float32[2,10] = BatchMatMul(a=%0, b=%2) {transposeA=false, transposeB=false}  # dense_Dense1
 *   ...
 *   return outputs=(%4) loss=%9 gradients={dense_Dense1/kernel: %12}
 * ```
 *
 * A loop shows its body under it:
 *
 * ```
 *   %3: float32[2,4] = poptfjs.ForLoop(%0, %1) {count=10}
 *     body(%0: float32[2,4] input0, %1: float32[4,4] captured0)
 *       %2: float32[2,4] = BatchMatMul(a=%0, b=%1) {transposeA=false, transposeB=false}
 *       return outputs=(%2)
 * ```
 */
import type { AttrValue, Graph, Value } from './graph.js';
import { POPTFJS_KERNELS } from '../backend/kernel_catalogue/kernel_catalogue.js';

function typeText(v: Value): string {
  return `${v.dtype}[${v.shape.join(',')}]`;
}

function attrText(a: AttrValue): string {
  if (Array.isArray(a)) return `[${a.map(attrText).join(',')}]`;
  if (a !== null && typeof a === 'object')
    return `{${Object.entries(a)
      .map(([k, v]) => `${k}=${attrText(v)}`)
      .join(', ')}}`;
  return typeof a === 'string' ? JSON.stringify(a) : String(a);
}

function constantText(v: Value): string {
  if (v.source.kind !== 'constant') return '';
  const data = v.source.data;
  if (data === null) return '(values unknown: traced with shapes only)';
  const shown = Array.from(data as ArrayLike<number | string>)
    .slice(0, 4)
    .map((x) => (typeof x === 'string' ? JSON.stringify(x) : String(x)));
  return `[${shown.join(', ')}${data.length > 4 ? `, ... (${data.length})` : ''}]`;
}

/** The names `irText` gives the bodies of a control-flow node, by position. */
function bodyNames(kernel: string, count: number): string[] {
  if (kernel === POPTFJS_KERNELS.cond) return ['then', 'else'];
  return count === 1 ? ['body'] : Array.from({ length: count }, (_, i) => `body${i}`);
}

/** Op attributes as `__outline{layer: embedding} other{a: b, c: d}`. */
function opAttributesText(attributes: Readonly<Record<string, Readonly<Record<string, string>>>>): string {
  return Object.entries(attributes)
    .map(
      ([attribute, values]) =>
        `${attribute}{${Object.entries(values)
          .map(([key, value]) => `${key}: ${value}`)
          .join(', ')}}`,
    )
    .join(' ');
}

/** The lines of `graph`, each after `indent`; `title` heads them (`graph`, or a body's name). */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: prints each kind of line of the IR text (inputs, nodes with their bodies, roles) in the order the text shows them
function graphLines(graph: Graph, title: string, indent: string): string[] {
  const lines: string[] = [];
  const header = graph.inputs.map((id) => {
    const v = graph.values[id]!;
    return `%${id}: ${typeText(v)} ${v.source.kind === 'input' ? v.source.name : ''}`.trimEnd();
  });
  lines.push(`${indent}${title}(${header.join(', ')})`);
  for (const v of graph.values) {
    if (v.source.kind === 'param') {
      lines.push(`${indent}  %${v.id}: ${typeText(v)} = param ${JSON.stringify(v.source.name)}${v.source.trainable ? ' trainable' : ''}`);
    } else if (v.source.kind === 'constant') {
      lines.push(`${indent}  %${v.id}: ${typeText(v)} = constant ${constantText(v)}`);
    }
  }
  for (const node of graph.nodes) {
    const outs = node.outputs.map((id) => `%${id}: ${typeText(graph.values[id]!)}`).join(', ');
    const args = node.inputs.map((id, i) => (node.inputNames ? `${node.inputNames[i]}=%${id}` : `%${id}`)).join(', ');
    const attrs = Object.keys(node.attrs).length > 0 ? ` ${attrText(node.attrs as AttrValue)}` : '';
    const notes = [
      node.annotations.pass === 'backward' ? `backward${node.annotations.gradOf !== undefined ? ` of #${node.annotations.gradOf}` : ''}` : '',
      node.annotations.layer ?? '',
      node.annotations.block !== undefined ? `block ${node.annotations.block}` : '',
      node.annotations.scope !== undefined ? `scope ${node.annotations.scope}` : '',
      node.annotations.attributes !== undefined ? `attributes ${opAttributesText(node.annotations.attributes)}` : '',
      node.annotations.availableMemoryProportion !== undefined ? `availableMemoryProportion ${node.annotations.availableMemoryProportion}` : '',
      node.annotations.partialsType !== undefined ? `partials ${node.annotations.partialsType}` : '',
      node.annotations.multiConv ? `multiConv ${node.annotations.multiConv.group}:${node.annotations.multiConv.index} ${node.annotations.multiConv.planType}` : '',
    ].filter(Boolean);
    lines.push(`${indent}  ${outs} = ${node.kernel}(${args})${attrs}${notes.length ? `  # ${notes.join(', ')}` : ''}`);
    const bodies = node.bodies ?? [];
    const names = bodyNames(node.kernel, bodies.length);
    bodies.forEach((body, i) => lines.push(...graphLines(body, names[i]!, `${indent}    `)));
  }
  const roles: string[] = [`outputs=(${graph.roles.outputs.map((id) => `%${id}`).join(', ')})`];
  if (graph.roles.loss !== undefined) roles.push(`loss=%${graph.roles.loss}`);
  if (graph.roles.gradients) {
    roles.push(
      `gradients={${Object.entries(graph.roles.gradients)
        .map(([k, v]) => `${k}: %${v}`)
        .join(', ')}}`,
    );
  }
  for (const a of graph.assignments) roles.push(`assign ${JSON.stringify(a.param)} := %${a.value}`);
  lines.push(`${indent}  return ${roles.join(' ')}`);
  return lines;
}

/**
 * The graph as text. The bodies of a control-flow node follow its line,
 * indented, each with its own value and node numbers.
 */
export function irText(graph: Graph): string {
  return graphLines(graph, 'graph', '').join('\n');
}
