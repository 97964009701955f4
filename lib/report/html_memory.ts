/**
 * The memory of each IPU in the HTML report: a bar per IPU, its parts (by
 * kind) labelled with their size, and a table of the same figures. The bars
 * share one scale: the IPU's capacity (a dashed line) when the fullest IPU
 * uses a quarter of it or more, else the fullest IPU's use, so a small
 * model's parts are as readable as a large one's; the page says which.
 */
import { formatBytes } from '../ipu/byte_size.js';
import type { IpuMemoryUse, MemoryKind } from '../ipu/memory_plan.js';
import type { Executable } from '../executable/executable.js';
import { escapeHtml } from './html_escape.js';

/** The colour of each kind of memory. */
export const MEMORY_COLOURS: Record<MemoryKind, string> = {
  weights: '#2f7ed8',
  'optimizer state': '#0d233a',
  'gradient accumulators': '#492970',
  activations: '#8bbc21',
  temporary: '#f28f43',
  'code and exchange': '#a6a6a6',
};

const MEMORY_KINDS = Object.keys(MEMORY_COLOURS) as MemoryKind[];

/** Width of a bar, pixels. */
const BAR_PIXELS = 700;

/** A fraction as a percentage, with two significant digits below 1%. */
export function percentText(fraction: number): string {
  const p = 100 * fraction;
  return `${p === 0 || p >= 1 ? p.toFixed(1) : p.toPrecision(2)}%`;
}

function bar(m: IpuMemoryUse, scale: number, showCapacity: boolean): string {
  const parts = MEMORY_KINDS.filter((k) => m.byKind[k] > 0)
    .map((k) => {
      const share = m.byKind[k] / scale;
      const text = formatBytes(m.byKind[k]);
      const label = share * BAR_PIXELS > 7 * text.length + 6 ? text : '';
      return `<span class="part" data-kind="${escapeHtml(k)}" style="width:${(100 * share).toFixed(3)}%;background:${MEMORY_COLOURS[k]}" title="${escapeHtml(`${k}: ${text}`)}">${label}</span>`;
    })
    .join('');
  const capacity = showCapacity ? `<span class="capacity" style="left:${((100 * m.capacity) / scale).toFixed(3)}%" title="capacity ${formatBytes(m.capacity)}"></span>` : '';
  return (
    `<div class="memory-row"><span class="memory-name">IPU ${m.ipu}</span><div class="bar">${parts}${capacity}</div>` +
    `<span class="memory-text${m.used > m.capacity ? ' over' : ''}">${formatBytes(m.used)}, ${percentText(m.used / m.capacity)} of ${formatBytes(m.capacity)}` +
    `${m.used > m.capacity ? ` — over by ${formatBytes(m.used - m.capacity)}` : ''}</span></div>`
  );
}

function table(ipus: readonly IpuMemoryUse[]): string {
  const head = ['IPU', ...MEMORY_KINDS, 'used', 'of capacity', 'largest item'].map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const rows = ipus
    .map((m) => {
      const largest = m.items[0];
      const cells = [
        String(m.ipu),
        ...MEMORY_KINDS.map((k) => formatBytes(m.byKind[k])),
        formatBytes(m.used),
        percentText(m.used / m.capacity),
        largest ? `${largest.kind}: ${largest.name} (${formatBytes(largest.bytes)})` : '-',
      ];
      return `<tr>${cells.map((c, i) => `<td${i > 0 && i <= MEMORY_KINDS.length + 2 ? ' class="number"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`;
    })
    .join('');
  return `<table class="memory"><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

/** The memory section: which scale the bars use, a bar per IPU, the table. */
export function memorySection(executable: Executable): string {
  const ipus = executable.hardware.memory.ipus;
  const fullest = Math.max(1, ...ipus.map((m) => m.used));
  const capacity = Math.max(...ipus.map((m) => m.capacity));
  const showCapacity = fullest >= capacity / 4;
  const scale = showCapacity ? Math.max(fullest, capacity) : fullest;
  const note = showCapacity
    ? `Bars are drawn to the scale of an IPU's capacity, ${formatBytes(capacity)} (the dashed line).`
    : `Bars are drawn to the scale of the fullest IPU, ${formatBytes(fullest)}: each IPU's capacity, ${formatBytes(capacity)}, is far off this scale.`;
  return `<p class="note">${escapeHtml(note)}</p>${ipus.map((m) => bar(m, scale, showCapacity)).join('')}${table(ipus)}`;
}
