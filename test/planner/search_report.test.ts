import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BeginBlock, Options, autoPlan, tf, type AutoPlan, type SearchReportFiles } from 'poptfjs';
import { CHROMIUM, renderedDom } from '../../scripts/headless_chromium.js';

const WIDTH = 256;

/** Six dense layers, a block each. */
function mlp(): tf.LayersModel {
  const layers = Array.from({ length: 6 }, (_, i) => tf.layers.dense({ units: WIDTH, activation: 'relu', name: `dense_${i}`, ...(i === 0 ? { inputShape: [WIDTH] } : {}) }));
  layers.forEach((layer, i) => BeginBlock(layer, { userId: `block_${i}` }));
  return tf.sequential({ layers });
}

/** The figures a point of the chart stands for, read from the rendered page. */
interface Point {
  readonly id: string;
  readonly kind: string;
  readonly cx: number;
  readonly cy: number;
  readonly throughput: number;
  readonly memory: number;
  readonly title: string;
}

function points(dom: string): Point[] {
  const found = [
    ...dom.matchAll(
      /<g class="candidate (\w+)" id="(\w+)" tabindex="0" data-throughput="([\d.]+)" data-memory="(\d+)"><title>([^<]*)<\/title><circle cx="([\d.]+)" cy="([\d.]+)"/g,
    ),
  ];
  return found.map(([, kind, id, throughput, memory, title, cx, cy]) => ({
    id: id!,
    kind: kind!,
    cx: Number(cx),
    cy: Number(cy),
    throughput: Number(throughput),
    memory: Number(memory),
    title: title!.replace(/&amp;/g, '&'),
  }));
}

/**
 * A copy of the report that, once Chromium has laid it out, asks it which tooltips show when the page is opened at
 * `#best` (the CSS rule `:target .tip` is the one `:hover` uses) and whether each lies inside the chart, and writes
 * the answers into the page for `--dump-dom` to print.
 */
function probedCopy(html: string): string {
  const probe = `<script>
location.hash = '#best';
const shown = [...document.querySelectorAll('.candidate')].filter((g) => getComputedStyle(g.querySelector('.tip')).display !== 'none').map((g) => g.id);
const svg = document.querySelector('svg.chart').getBoundingClientRect();
const inside = [...document.querySelectorAll('.candidate .tip rect')].every((r) => {
  const b = r.getBBox();
  return b.x >= 0 && b.y >= 0 && b.x + b.width <= svg.width && b.y + b.height <= svg.height;
});
const answer = document.createElement('pre');
answer.className = 'probe' + '-answer';
answer.textContent = JSON.stringify({ shown, inside });
document.body.append(answer);
</script>`;
  const copy = join(mkdtempSync(join(tmpdir(), 'poptfjs-search-probe-')), 'probed.html');
  writeFileSync(copy, readFileSync(html, 'utf8').replace('</body>', `${probe}</body>`));
  return copy;
}

describe.skipIf(!CHROMIUM)("a search's report, rendered in headless Chromium", () => {
  let search: AutoPlan;
  let files: SearchReportFiles;
  let dom: string;
  beforeAll(async () => {
    // An IPU of 2 MiB: the model with Adam fits only pipelined, so some candidates do not fit.
    search = await autoPlan(mlp, {
      ipus: 4,
      globalBatch: 64,
      loss: 'meanSquaredError',
      optimizer: 'adam',
      inputs: [{ shape: [WIDTH] }],
      target: { shape: [WIDTH] },
      options: new Options().ipuTarget({ tiles: 32, memoryPerTile: 64 * 1024 }),
    });
    files = search.report(mkdtempSync(join(tmpdir(), 'poptfjs-search-report-')));
    dom = renderedDom(files.html);
  }, 180_000);

  it('draws every candidate as a point, those that fit left of the capacity line and those that do not right of it', () => {
    const drawn = points(dom);
    expect(drawn).toHaveLength(search.candidates.length + search.rejected.length);
    expect(search.rejected.length).toBeGreaterThan(0);
    const capacity = dom.match(/<line class="capacity" x1="([\d.]+)"/);
    expect(capacity).not.toBeNull();
    const capacityX = Number(capacity![1]);
    for (const c of [...search.candidates, ...search.rejected]) {
      const point = drawn.find((p) => p.memory === c.fullest.used && p.throughput === Number(c.throughput.toFixed(1)));
      expect(point, c.describe()).toBeDefined();
      if (c.fits) expect(point!.cx).toBeLessThanOrEqual(capacityX);
      else expect(point!.cx).toBeGreaterThan(capacityX);
    }
    // Higher throughput is drawn higher (smaller y).
    const byThroughput = [...drawn].sort((a, b) => a.throughput - b.throughput);
    for (let i = 1; i < byThroughput.length; i++) expect(byThroughput[i]!.cy).toBeLessThanOrEqual(byThroughput[i - 1]!.cy);
    expect(dom).toMatch(/<text class="capacity-label"[^>]*>capacity 2\.0 MiB<\/text>/);
  });

  it('marks the winner, the fastest point left of the capacity line, and gives each point its configuration', () => {
    const drawn = points(dom);
    const best = drawn.filter((p) => p.kind === 'best');
    expect(best).toHaveLength(1);
    expect(best[0]!.id).toBe('best');
    expect(best[0]!.throughput).toBe(Math.max(...drawn.filter((p) => p.kind !== 'rejected').map((p) => p.throughput)));
    expect(dom).toContain('<text class="best-label"');
    const winner = search.best!;
    expect(best[0]!.title).toContain(`micro-batch ${winner.microBatch}, accumulation ${winner.gradientAccumulation}, device iterations ${winner.deviceIterations}`);
    expect(best[0]!.title).toContain(`recomputation ${winner.recomputation}, optimizer state ${winner.optimizerState}`);
    expect(best[0]!.title).toContain(`${winner.ipusPerReplica} IPU(s) a replica × ${winner.replicas} replica(s)`);
    for (const p of drawn.filter((p) => p.kind === 'rejected')) expect(p.title).toMatch(/^does not fit: [\d.]+ samples\/s, does not fit\nfullest IPU \d: /);
  });

  it("shows a point's configuration as a tooltip inside the chart when it is pointed at, and no other", () => {
    const probed = renderedDom(probedCopy(files.html));
    const answer = JSON.parse(probed.match(/<pre class="probe-answer">(.*?)<\/pre>/)![1]!.replace(/&quot;/g, '"'));
    expect(answer).toEqual({ shown: ['best'], inside: true });
  });

  it("says why the best wins, lists every candidate, and links the best configuration's own report", () => {
    expect(dom).toContain(`the fastest of the ${search.candidates.length} configuration(s) that fit`);
    expect(dom.match(/<table class="candidates">.*?<\/table>/s)![0].match(/<tr>/g)).toHaveLength(search.candidates.length + search.rejected.length + 1);
    const link = dom.match(/<a href="([^"]+)">The best configuration's report<\/a>/);
    expect(link![1]).toBe(files.best!.html.split('/').pop());
    expect(renderedDom(files.best!.html)).toMatch(/<g class="lane" data-ipu="\d">/);
    const json = JSON.parse(readFileSync(files.json, 'utf8'));
    expect(json.best.config).toBe(search.best!.configText());
    expect(json.candidates).toHaveLength(search.candidates.length);
    expect(json.rejected).toHaveLength(search.rejected.length);
  });
});
