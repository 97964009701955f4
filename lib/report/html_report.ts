/**
 * The profile report as one self-contained HTML page (inline CSS and SVG, no
 * network, no scripts): a timeline with one lane per IPU coloured by what
 * the IPU does and labelled with micro-batches, a memory bar per IPU against
 * its capacity, and the placement table.
 */
import { formatBytes } from '../ipu/byte_size.js';
import type { MemoryKind } from '../ipu/memory_plan.js';
import type { SegmentKind } from '../ipu/timeline.js';
import type { Executable } from '../executable/executable.js';
import { UNANNOTATED_BLOCK } from '../strategy/placement.js';

const SEGMENT_COLOURS: Record<SegmentKind, string> = {
  compute: '#2f7ed8',
  exchange: '#f28f43',
  streaming: '#8bbc21',
  sync: '#a6a6a6',
  host: '#77a1e5',
  'all-reduce': '#c42525',
  update: '#910000',
};

const MEMORY_COLOURS: Record<MemoryKind, string> = {
  weights: '#2f7ed8',
  'optimizer state': '#0d233a',
  'gradient accumulators': '#492970',
  activations: '#8bbc21',
  temporary: '#f28f43',
  'code and exchange': '#a6a6a6',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function timelineSvg(executable: Executable): string {
  const { timeline } = executable.hardware;
  const lanes = timeline.ipus.length;
  const width = 1100;
  const left = 70;
  const laneHeight = 34;
  const top = 24;
  const plot = width - left - 10;
  const scale = timeline.duration > 0 ? plot / timeline.duration : 0;
  const parts: string[] = [];
  for (let ipu = 0; ipu < lanes; ipu++) {
    const y = top + ipu * laneHeight;
    const segments = timeline.segments.filter((s) => s.ipu === ipu);
    const rects = segments
      .map((s) => {
        const x = left + s.start * scale;
        const w = Math.max(0.5, (s.end - s.start) * scale);
        const label = s.kind === 'compute' && w > 7 * s.label.length ? `<text x="${(x + w / 2).toFixed(1)}" y="${y + 19}" class="label">${escapeHtml(s.label)}</text>` : '';
        return `<rect x="${x.toFixed(2)}" y="${y + 4}" width="${w.toFixed(2)}" height="${laneHeight - 8}" fill="${SEGMENT_COLOURS[s.kind]}"><title>${escapeHtml(`IPU ${ipu} ${s.kind}: ${s.label} (${((s.end - s.start) * 1e6).toFixed(2)} µs)`)}</title></rect>${label}`;
      })
      .join('');
    parts.push(
      `<g class="lane" data-ipu="${ipu}"><rect x="${left}" y="${y + 4}" width="${plot}" height="${laneHeight - 8}" class="idle"/>` +
        `<text x="8" y="${y + 21}" class="lane-name">IPU ${ipu}</text>${rects}</g>`,
    );
  }
  const axisY = top + lanes * laneHeight + 14;
  const ticks = Array.from({ length: 6 }, (_, i) => {
    const t = (timeline.duration * i) / 5;
    const x = left + t * scale;
    const anchor = i === 0 ? 'start' : i === 5 ? 'end' : 'middle';
    return `<text x="${x.toFixed(1)}" y="${axisY}" class="tick" text-anchor="${anchor}">${(t * 1e3).toFixed(3)} ms</text>`;
  }).join('');
  return `<svg class="timeline" width="${width}" height="${axisY + 10}" viewBox="0 0 ${width} ${axisY + 10}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}${ticks}</svg>`;
}

function legend(colours: Record<string, string>): string {
  return `<div class="legend">${Object.entries(colours)
    .map(([name, colour]) => `<span><i style="background:${colour}"></i>${escapeHtml(name)}</span>`)
    .join('')}</div>`;
}

function memoryBars(executable: Executable): string {
  return executable.hardware.memory.ipus
    .map((m) => {
      const scale = Math.max(m.used, m.capacity);
      const parts = (Object.keys(MEMORY_COLOURS) as MemoryKind[])
        .filter((k) => m.byKind[k] > 0)
        .map(
          (k) =>
            `<span class="part" style="width:${((100 * m.byKind[k]) / scale).toFixed(3)}%;background:${MEMORY_COLOURS[k]}" title="${escapeHtml(`${k}: ${formatBytes(m.byKind[k])}`)}"></span>`,
        )
        .join('');
      const capacityAt = (100 * m.capacity) / scale;
      return (
        `<div class="memory-row"><span class="memory-name">IPU ${m.ipu}</span><div class="bar">${parts}<span class="capacity" style="left:${capacityAt.toFixed(3)}%"></span></div>` +
        `<span class="memory-text${m.used > m.capacity ? ' over' : ''}">${formatBytes(m.used)} of ${formatBytes(m.capacity)}</span></div>`
      );
    })
    .join('');
}

function placementTable(executable: Executable): string {
  const rows = executable.placement.stages
    .map(
      (s) =>
        `<tr><td>${s.index}</td><td>${s.stageId}</td><td>${s.ipu}</td><td>${s.phase ?? ''}</td><td>${escapeHtml(s.blocks.map((b) => (b === UNANNOTATED_BLOCK ? b : `'${b}'`)).join(', '))}</td></tr>`,
    )
    .join('');
  return `<table class="placement"><thead><tr><th>stage</th><th>stage id</th><th>IPU</th><th>phase</th><th>blocks</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** The report page. */
export function htmlReport(executable: Executable): string {
  const { timeline, spec } = executable.hardware;
  const style = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.facts span{display:inline-block;margin-right:24px}.idle{fill:#f4f4f4}.lane-name{font-size:12px;fill:#333}.label{font-size:10px;fill:#fff;text-anchor:middle}
.tick{font-size:10px;fill:#666}.legend span{margin-right:14px;font-size:12px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
.memory-row{display:flex;align-items:center;margin:6px 0}.memory-name{width:60px}.bar{position:relative;display:flex;width:700px;height:18px;background:#f4f4f4}
.part{height:100%}.capacity{position:absolute;top:-3px;bottom:-3px;border-left:2px dashed #000}.memory-text{margin-left:10px;font-size:12px}.over{color:#c42525;font-weight:bold}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>poptfjs report: ${escapeHtml(executable.modelName)}</title><style>${style}</style></head><body>
<h1>poptfjs report: ${escapeHtml(executable.modelName)} (${executable.kind})</h1>
<div class="facts"><span>${executable.placement.strategy}</span><span>${executable.placement.ipusReserved} IPU(s)</span>
<span>${timeline.cycles} cycles per call</span><span>${timeline.throughput.toFixed(1)} samples/s</span>
<span>bubble ${(100 * timeline.bubbleFraction).toFixed(1)}%</span><span>${(spec.clockHz / 1e9).toFixed(2)} GHz</span></div>
<h2>Timeline of one call</h2>${legend(SEGMENT_COLOURS)}${timelineSvg(executable)}
<h2>Memory</h2>${legend(MEMORY_COLOURS)}${memoryBars(executable)}
<h2>Placement</h2>${placementTable(executable)}
</body></html>
`;
}
