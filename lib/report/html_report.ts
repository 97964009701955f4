/**
 * The profile report as one self-contained HTML page (inline CSS and SVG, no
 * network, no scripts): the facts of one call, a timeline with one lane per
 * IPU and a sentence on its pipeline bubble, the memory of each IPU (bars
 * with their figures, and a table), the blocks with the IPU each runs on, and
 * the layers with their weights and kernel time.
 */
import { formatBytes } from '../ipu/byte_size.js';
import type { Executable } from '../executable/executable.js';
import { escapeHtml } from './html_escape.js';
import { MEMORY_COLOURS, memorySection } from './html_memory.js';
import { blocksTable, durationText, layersTable } from './html_tables.js';
import { legend, SEGMENT_COLOURS, timelineSvg } from './html_timeline.js';
import { blockCosts, layerCosts } from './layer_costs.js';
import { strategyText } from './plan_text.js';
import { bubbleText } from './summary_report.js';

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1150px}h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.facts span{display:inline-block;margin-right:24px}.note{color:#444;margin:6px 0}.idle{fill:#f4f4f4}.lane-name{font-size:12px;fill:#333}
.label{font-size:10px;fill:#fff;text-anchor:middle}.tick{font-size:10px;fill:#666}
.legend span{margin-right:14px;font-size:12px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
.memory-row{display:flex;align-items:center;margin:6px 0}.memory-name{width:60px}.bar{position:relative;display:flex;width:700px;height:20px;background:#f4f4f4}
.part{height:100%;min-width:3px;color:#fff;font-size:11px;line-height:20px;text-align:center;overflow:hidden;white-space:nowrap}
.capacity{position:absolute;top:-3px;bottom:-3px;border-left:2px dashed #000}.memory-text{margin-left:10px;font-size:12px}.over{color:#c42525;font-weight:bold}
table{border-collapse:collapse;margin-top:10px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}td.number{text-align:right}th{background:#f4f4f4}
.fits{color:#2a7a2a;font-weight:bold}.does-not-fit{color:#c42525;font-weight:bold}`;

/** The facts of one call, in a row. */
function facts(executable: Executable): string {
  const { timeline, spec, memory } = executable.hardware;
  const items = [
    strategyText(executable.placement),
    `${executable.placement.ipusReserved} IPU(s) reserved`,
    `${(spec.clockHz / 1e9).toFixed(2)} GHz`,
    `${timeline.cycles} cycles per call (${durationText(timeline.duration)})`,
    `${timeline.throughput.toFixed(1)} samples/s`,
    `micro-batch ${executable.microBatchSize}`,
  ];
  const fit = memory.fits ? '<span class="fits">fits</span>' : '<span class="does-not-fit">does not fit</span>';
  return `<div class="facts">${items.map((i) => `<span>${escapeHtml(i)}</span>`).join('')}${fit}</div>`;
}

/**
 * The report page of `executable`; `traceFile`, the name of the Chrome trace
 * written beside it, is named under the timeline.
 */
export function htmlReport(executable: Executable, traceFile?: string): string {
  // Layers that hold no weights and take no time (views, joins the compiler folds away) say nothing.
  const layers = layerCosts(executable).filter((l) => l.weightBytes > 0 || l.forwardCycles + l.backwardCycles > 0);
  const trace = traceFile ? ` The same timeline as a trace for Perfetto (ui.perfetto.dev) or chrome://tracing: ${traceFile}.` : '';
  const weights = executable.hardware.memory.ipus.reduce((n, m) => n + m.byKind.weights, 0);
  const title = `poptfjs report: ${executable.modelName} (${executable.kind})`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>
<h1>${escapeHtml(title)}</h1>
${facts(executable)}
<h2>Timeline of one call</h2>${legend(SEGMENT_COLOURS)}${timelineSvg(executable)}
<p class="note bubble">${escapeHtml(`${bubbleText(executable)[0]!.toUpperCase()}${bubbleText(executable).slice(1)}.`)}${escapeHtml(trace)}</p>
<h2>Memory of each IPU</h2>${legend(MEMORY_COLOURS)}${memorySection(executable)}
<h2>Blocks and the IPUs they run on</h2>${blocksTable(executable, blockCosts(layers))}
<h2>Layers</h2><p class="note">${escapeHtml(`Weights (${formatBytes(weights)} in all) and simulated kernel time per micro-batch, in the order the layers run; layers without either are left out.`)}</p>${layersTable(executable, layers)}
</body></html>
`;
}
