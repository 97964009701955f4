/**
 * The timeline of one call as inline SVG: one lane per IPU, each segment
 * coloured by what the IPU does (its kind) and, when wide enough, labelled
 * with what runs (`F1:3`: the forward pass of stage 1 on micro-batch 3); a
 * segment's tooltip gives its kind, label and duration.
 */
import type { SegmentKind } from '../ipu/timeline.js';
import type { Executable } from '../executable/executable.js';
import { escapeHtml } from './html_escape.js';

/** The colour of each kind of segment. */
export const SEGMENT_COLOURS: Record<SegmentKind, string> = {
  compute: '#2f7ed8',
  exchange: '#f28f43',
  streaming: '#8bbc21',
  sync: '#a6a6a6',
  host: '#77a1e5',
  'all-reduce': '#c42525',
  update: '#910000',
};

/** A legend of named colours. */
export function legend(colours: Readonly<Record<string, string>>): string {
  return `<div class="legend">${Object.entries(colours)
    .map(([name, colour]) => `<span><i style="background:${colour}"></i>${escapeHtml(name)}</span>`)
    .join('')}</div>`;
}

/** The timeline's SVG. */
export function timelineSvg(executable: Executable): string {
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
    const rects = timeline.segments
      .filter((s) => s.ipu === ipu)
      .map((s) => {
        const x = left + s.start * scale;
        const w = Math.max(0.5, (s.end - s.start) * scale);
        const label = s.kind === 'compute' && w > 7 * s.label.length ? `<text x="${(x + w / 2).toFixed(1)}" y="${y + 19}" class="label">${escapeHtml(s.label)}</text>` : '';
        const title = `IPU ${ipu} ${s.kind}: ${s.label} (${((s.end - s.start) * 1e6).toFixed(2)} µs)`;
        return `<rect x="${x.toFixed(2)}" y="${y + 4}" width="${w.toFixed(2)}" height="${laneHeight - 8}" fill="${SEGMENT_COLOURS[s.kind]}"><title>${escapeHtml(title)}</title></rect>${label}`;
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
