/**
 * The HTML report's tables of blocks and layers: which IPU each block runs
 * on (its stage and phase), and the weights and simulated kernel time per
 * micro-batch of each block and each layer.
 */
import { formatBytes } from '../ipu/byte_size.js';
import type { Executable } from '../executable/executable.js';
import { UNANNOTATED_BLOCK } from '../strategy/placement.js';
import { escapeHtml } from './html_escape.js';
import { percentText } from './html_memory.js';
import type { BlockCost, LayerCost } from './layer_costs.js';

/** Simulated seconds as text: milliseconds from 1 ms on, else microseconds. */
export function durationText(seconds: number): string {
  return seconds >= 1e-3 ? `${(seconds * 1e3).toFixed(3)} ms` : `${(seconds * 1e6).toFixed(2)} µs`;
}

function blockName(block: string): string {
  return block === UNANNOTATED_BLOCK ? block : `'${block}'`;
}

/** A table: the header cells, then rows whose cells after the first `textColumns` are right-aligned numbers. */
function htmlTable(className: string, head: readonly string[], rows: readonly (readonly string[])[], textColumns: number): string {
  const header = head.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c, i) => `<td${i >= textColumns ? ' class="number"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`).join('');
  return `<table class="${className}"><thead><tr>${header}</tr></thead><tbody>${body}</tbody></table>`;
}

/** The blocks, each with its stage, IPU and phase (the block-to-IPU map) and its layers' weights and time. */
export function blocksTable(executable: Executable, blocks: readonly BlockCost[]): string {
  const clock = executable.hardware.spec.clockHz;
  const training = executable.kind === 'training';
  const stagesOf = (block: string) => executable.placement.stages.filter((s) => s.blocks.includes(block));
  const rows = blocks.map((b) => {
    const stages = stagesOf(b.block);
    const phases = stages.filter((s) => s.phase !== undefined).map((s) => String(s.phase));
    return [
      blockName(b.block),
      stages.map((s) => `${s.index} (id ${s.stageId})`).join(', ') || '-',
      [...new Set(stages.map((s) => s.ipu))].join(', ') || String(b.ipu),
      phases.join(', ') || '-',
      String(b.layers),
      formatBytes(b.weightBytes),
      durationText(b.forwardCycles / clock),
      ...(training ? [durationText(b.backwardCycles / clock)] : []),
    ];
  });
  const head = ['block', 'stage', 'IPU', 'phase', 'layers', 'weights', 'forward per micro-batch', ...(training ? ['backward per micro-batch'] : [])];
  return htmlTable('blocks', head, rows, 4);
}

/** The layers in the order they run: block, where in the user's code it starts, IPU, weights, forward (and backward) time, share of all kernel time. */
export function layersTable(executable: Executable, layers: readonly LayerCost[]): string {
  const clock = executable.hardware.spec.clockHz;
  const training = executable.kind === 'training';
  const total = layers.reduce((n, l) => n + l.forwardCycles + l.backwardCycles, 0);
  const rows = layers.map((l) => [
    l.name,
    blockName(l.block),
    l.source ?? '-',
    String(l.ipu),
    formatBytes(l.weightBytes),
    durationText(l.forwardCycles / clock),
    ...(training ? [durationText(l.backwardCycles / clock)] : []),
    percentText(total > 0 ? (l.forwardCycles + l.backwardCycles) / total : 0),
  ]);
  const head = ['layer', 'block', 'source', 'IPU', 'weights', 'forward per micro-batch', ...(training ? ['backward per micro-batch'] : []), 'share of kernel time'];
  return htmlTable('layers', head, rows, 3);
}
