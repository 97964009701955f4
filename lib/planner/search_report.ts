/**
 * The report of an `autoPlan()` search: one self-contained HTML page (inline
 * CSS and SVG, no scripts) with every candidate on a chart — throughput
 * against the memory of its fullest IPU, the IPU's capacity as a line, the
 * winner marked — each candidate's configuration shown on hover (or when
 * the page is opened at `#c<n>`, or `#best`), why the winner wins, and the
 * candidates in a table; beside it the search as JSON and the winner's own
 * reports, as a compiled model's.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../files/atomic_file.js';
import { formatBytes } from '../ipu/byte_size.js';
import { escapeHtml } from '../report/html_escape.js';
import { type ProfileReportFiles, writeProfileReports } from '../report/profile_report.js';
import type { Candidate } from './search_candidate.js';

/** What a search report shows. */
export interface SearchReportData {
  readonly modelName: string;
  readonly ipus: number;
  readonly globalBatch: number;
  readonly best: Candidate | undefined;
  readonly candidates: readonly Candidate[];
  readonly rejected: readonly Candidate[];
  readonly why: string;
}

/** The files {@link writeSearchReport} wrote. */
export interface SearchReportFiles {
  /** `<model>-search.html`: the chart, the reasons and the table. */
  readonly html: string;
  /** `<model>-search.json`: every candidate's choices, figures and config file. */
  readonly json: string;
  /** The winner's reports (HTML, JSON, Chrome trace), when a configuration fits. */
  readonly best?: ProfileReportFiles;
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1150px}h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.note{color:#444;margin:6px 0;white-space:pre-wrap}.axis{stroke:#444}.grid{stroke:#eee}.tick{font-size:11px;fill:#555}.axis-name{font-size:12px;fill:#333}
.capacity{stroke:#c42525;stroke-dasharray:6 4;stroke-width:2}.capacity-label{font-size:11px;fill:#c42525}
.fits circle{fill:#2f7ed8;fill-opacity:.75}.rejected circle{fill:none;stroke:#c42525;stroke-width:1.5}.best circle{fill:#2a9d3a;stroke:#111;stroke-width:2}
.best-label{font-size:12px;font-weight:bold;fill:#2a9d3a}.candidate{cursor:pointer}.candidate .tip{display:none}.candidate:hover .tip,.candidate:focus .tip,.candidate:target .tip{display:inline}
.tip rect{fill:#fff;stroke:#333;stroke-width:1;filter:drop-shadow(1px 2px 2px rgba(0,0,0,.3))}.tip text{font-size:12px;fill:#111}.legend span{margin-right:16px;font-size:12px}
table{border-collapse:collapse;margin-top:10px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:12px}td.number{text-align:right}th{background:#f4f4f4}`;

const MIB = 2 ** 20;

/** The lines of a candidate's tooltip. */
function tipLines(c: Candidate, rank: string): string[] {
  const amp = [...new Set(c.availableMemoryProportion)];
  return [
    `${rank}: ${c.throughput.toFixed(1)} samples/s, ${c.fits ? 'fits' : 'does not fit'}`,
    `fullest IPU ${c.fullest.ipu}: ${formatBytes(c.fullest.used)} of ${formatBytes(c.fullest.capacity)}`,
    `${c.ipusPerReplica} IPU(s) a replica × ${c.replicas} replica(s)`,
    ...(c.ipusPerReplica > 1 ? [`stages [${c.split.stages.map((s) => s.length).join(', ')}] on IPUs [${c.split.ipus.join(', ')}]`] : []),
    `micro-batch ${c.microBatch}, accumulation ${c.gradientAccumulation}, device iterations ${c.deviceIterations}`,
    `recomputation ${c.recomputation}, optimizer state ${c.optimizerState}`,
    `memory proportion ${amp.length === 1 ? amp[0] : `[${c.availableMemoryProportion.join(', ')}]`}`,
  ];
}

/** A round step for an axis of `span`. */
function niceStep(span: number, ticks: number): number {
  const raw = span / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
}

/** The chart: throughput against the fullest IPU's memory, every candidate a point with its configuration on hover. */
export function candidatesChart(data: SearchReportData): string {
  const all = [...data.candidates, ...data.rejected];
  const width = 1100;
  const height = 520;
  const left = 80;
  const right = 20;
  const top = 20;
  const bottom = 50;
  const capacity = Math.max(...all.map((c) => c.fullest.capacity), 1) / MIB;
  const maxMemory = Math.max(capacity * 1.15, ...all.map((c) => c.fullest.used / MIB)) * 1.02;
  const maxThroughput = Math.max(...all.map((c) => c.throughput), 1) * 1.08;
  const x = (mib: number) => left + ((width - left - right) * mib) / maxMemory;
  const y = (t: number) => height - bottom - ((height - top - bottom) * t) / maxThroughput;
  const parts: string[] = [];
  const xStep = niceStep(maxMemory, 10);
  for (let v = 0; v <= maxMemory; v += xStep) {
    parts.push(
      `<line class="grid" x1="${x(v)}" y1="${top}" x2="${x(v)}" y2="${height - bottom}"/><text class="tick" x="${x(v)}" y="${height - bottom + 16}" text-anchor="middle">${v}</text>`,
    );
  }
  const yStep = niceStep(maxThroughput, 8);
  for (let v = 0; v <= maxThroughput; v += yStep) {
    parts.push(
      `<line class="grid" x1="${left}" y1="${y(v)}" x2="${width - right}" y2="${y(v)}"/><text class="tick" x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`,
    );
  }
  parts.push(
    `<line class="axis" x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}"/><line class="axis" x1="${left}" y1="${top}" x2="${left}" y2="${height - bottom}"/>`,
    `<text class="axis-name" x="${(left + width - right) / 2}" y="${height - 12}" text-anchor="middle">memory of the fullest IPU (MiB)</text>`,
    `<text class="axis-name" transform="translate(18 ${(top + height - bottom) / 2}) rotate(-90)" text-anchor="middle">throughput (samples/s, simulated)</text>`,
    `<line class="capacity" x1="${x(capacity)}" y1="${top}" x2="${x(capacity)}" y2="${height - bottom}"/>`,
    `<text class="capacity-label" x="${x(capacity) + 4}" y="${top + 12}">capacity ${formatBytes(capacity * MIB)}</text>`,
  );
  // The winner last, so it and its tooltip are drawn on top.
  const points = all.filter((c) => c !== data.best);
  if (data.best) points.push(data.best);
  const rank = (c: Candidate) => (c === data.best ? 'best' : c.fits ? `#${data.candidates.indexOf(c) + 1}` : 'does not fit');
  for (const c of points) {
    const cx = x(c.fullest.used / MIB);
    const cy = y(c.throughput);
    const lines = tipLines(c, rank(c));
    const tipWidth = 8 + 6.6 * Math.max(...lines.map((l) => l.length));
    const tipHeight = 8 + 16 * lines.length;
    const tx = cx + 12 + tipWidth > width ? cx - 12 - tipWidth : cx + 12;
    const ty = Math.min(Math.max(cy - tipHeight / 2, 0), height - tipHeight);
    const kind = c === data.best ? 'best' : c.fits ? 'fits' : 'rejected';
    const id = c === data.best ? 'best' : `c${all.indexOf(c)}`;
    const text = lines.map((l, i) => `<tspan x="${tx + 6}" y="${ty + 18 + 16 * i}">${escapeHtml(l)}</tspan>`).join('');
    parts.push(
      `<g class="candidate ${kind}" id="${id}" tabindex="0" data-throughput="${c.throughput.toFixed(1)}" data-memory="${c.fullest.used}">` +
        `<title>${escapeHtml(lines.join('\n'))}</title><circle cx="${cx}" cy="${cy}" r="${c === data.best ? 8 : 5}"/>` +
        (c === data.best ? `<text class="best-label" x="${cx + 11}" y="${cy - 9}">best</text>` : '') +
        `<g class="tip"><rect x="${tx}" y="${ty}" width="${tipWidth}" height="${tipHeight}" rx="4"/><text>${text}</text></g></g>`,
    );
  }
  return `<svg class="chart" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>`;
}

/** The candidates as a table, those that fit first (fastest first), then those that do not. */
function candidatesTable(data: SearchReportData): string {
  const rows = [...data.candidates, ...data.rejected].map((c, i) => {
    const cells = [
      c === data.best ? 'best' : c.fits ? `${i + 1}` : 'no',
      c.throughput.toFixed(1),
      `${formatBytes(c.fullest.used)} (IPU ${c.fullest.ipu})`,
      `${c.ipusPerReplica} × ${c.replicas}`,
      `${c.microBatch}`,
      `${c.gradientAccumulation}`,
      `${c.deviceIterations}`,
      c.recomputation,
      c.optimizerState,
      [...new Set(c.availableMemoryProportion)].join(', '),
      c.ipusPerReplica > 1 ? `[${c.split.stages.map((s) => s.length).join(',')}]` : '-',
    ];
    return `<tr>${cells.map((cell, j) => `<td${j === 1 || j === 4 || j === 5 || j === 6 ? ' class="number"' : ''}>${escapeHtml(cell)}</td>`).join('')}</tr>`;
  });
  const head = [
    'fits (rank)',
    'samples/s',
    'fullest IPU',
    'IPUs × replicas',
    'micro-batch',
    'accumulation',
    'device iterations',
    'recomputation',
    'optimizer state',
    'memory proportion',
    'stages',
  ];
  return `<table class="candidates"><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>${rows.join('')}</table>`;
}

/** The search's page; `bestReport`, the file name of the winner's own report, is linked. */
export function searchReportHtml(data: SearchReportData, bestReport?: string): string {
  const title = `poptfjs search: ${data.modelName} on ${data.ipus} IPU(s), global batch ${data.globalBatch}`;
  const count = `${data.candidates.length} of ${data.candidates.length + data.rejected.length} configuration(s) planned fit.`;
  const best = data.best ? `Best: ${data.best.describe()}.` : 'No configuration fits.';
  const link = bestReport ? ` <a href="${escapeHtml(bestReport)}">The best configuration's report</a>.` : '';
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p class="note">${escapeHtml(`${count} ${best}`)}${link}</p>
<h2>Every candidate: throughput against the memory of its fullest IPU</h2>
<div class="legend"><span>● fits</span><span>○ does not fit</span><span>best: the winner</span><span>- - - the IPU's capacity</span><span>hover a point for its configuration</span></div>
${candidatesChart(data)}
<h2>Why the best wins</h2><p class="note why">${escapeHtml(data.why)}</p>
<h2>Candidates</h2>${candidatesTable(data)}
</body></html>
`;
}

/** The search as JSON data: every candidate's choices, figures and config file. */
function searchJson(data: SearchReportData): object {
  const entry = (c: Candidate) => ({
    fits: c.fits,
    throughput: c.throughput,
    fullest: { ipu: c.fullest.ipu, used: c.fullest.used, capacity: c.fullest.capacity },
    ipusPerReplica: c.ipusPerReplica,
    replicas: c.replicas,
    microBatch: c.microBatch,
    gradientAccumulation: c.gradientAccumulation,
    deviceIterations: c.deviceIterations,
    recomputation: c.recomputation,
    optimizerState: c.optimizerState,
    availableMemoryProportion: c.availableMemoryProportion,
    stages: c.split.stages,
    stageIpus: c.split.ipus,
    config: c.configText(),
  });
  return {
    modelName: data.modelName,
    ipus: data.ipus,
    globalBatch: data.globalBatch,
    why: data.why,
    best: data.best ? entry(data.best) : null,
    candidates: data.candidates.map(entry),
    rejected: data.rejected.map(entry),
  };
}

/** Writes the search's report into `directory` (created if missing), each file atomically; returns their paths. */
export function writeSearchReport(directory: string, data: SearchReportData): SearchReportFiles {
  mkdirSync(directory, { recursive: true });
  const name = `${data.modelName.replace(/[^\w.-]+/g, '_')}-search`;
  const best = data.best ? writeProfileReports(directory, data.best.plan.executable) : undefined;
  const files = { html: join(directory, `${name}.html`), json: join(directory, `${name}.json`) };
  const write = (path: string, text: string) => writeFileAtomic(path, new TextEncoder().encode(text));
  write(files.json, JSON.stringify(searchJson(data), null, 1));
  write(files.html, searchReportHtml(data, best ? best.html.split(/[\\/]/).pop() : undefined));
  return { ...files, ...(best ? { best } : {}) };
}
