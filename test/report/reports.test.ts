import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Block, Options, inferenceModel, writeProfileReports } from 'poptfjs';
import { profileDirectory } from '../../lib/report/profile_report.js';
import { CHROMIUM, renderedDom } from '../../scripts/headless_chromium.js';
import { REPORT_GALLERY } from '../../scripts/report_gallery.js';

function pipelinedModel() {
  const layers = [0, 1, 2, 3].map((i) => {
    const l = tf.layers.dense({ units: 16, inputShape: [16], kernelInitializer: tf.initializers.glorotUniform({ seed: i }) });
    l.apply(tf.zeros([1, 16]));
    return l;
  });
  return (x: tf.Tensor) => {
    layers.forEach((layer, i) => {
      x = Block.run({ userId: `layer${i}`, ipuId: i }, () => tf.relu(layer.apply(x) as tf.Tensor));
    });
    return x;
  };
}

afterEach(() => {
  delete process.env.POPTFJS_ENGINE_OPTIONS;
});

/** The Trace Event Format (as Perfetto and chrome://tracing read JSON traces): complete and metadata events. */
const traceFile = z.object({
  traceEvents: z.array(
    z.discriminatedUnion('ph', [
      z.object({
        ph: z.literal('X'),
        name: z.string().min(1),
        cat: z.string(),
        ts: z.number().nonnegative(),
        dur: z.number().nonnegative(),
        pid: z.number().int(),
        tid: z.number().int(),
      }),
      z.object({
        ph: z.literal('M'),
        name: z.enum(['process_name', 'thread_name', 'thread_sort_index']),
        pid: z.number().int(),
        tid: z.number().int(),
        args: z.record(z.string(), z.unknown()),
      }),
    ]),
  ),
  displayTimeUnit: z.enum(['ms', 'ns']),
});

describe('reports', () => {
  it('the summary report shows memory and placement, and says that execution profiling is not enabled and how to enable it', async () => {
    const executor = inferenceModel(pipelinedModel(), { options: new Options().deviceIterations(8) });
    await executor.compile(tf.ones([8, 16]));
    const report = executor.getSummaryReport();
    expect(report).toMatch(/Memory per IPU \(capacity 897\.0 MiB: 1472 tiles × 624\.0 KiB\):/);
    expect(report).toContain("stage 3 (id 3) on IPU 3: blocks 'layer3'");
    expect(report).toContain("Execution profiling not enabled: the simulated time of a call is reported once it is, with\n  opts.enableProfiling('./reports')");
    expect(report).toContain(`POPTFJS_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./reports"}'`);
  });

  it('calls a model on one IPU what it is, not a pipeline, and says it has no bubble', async () => {
    const executor = inferenceModel(tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [4] })] }), {
      options: new Options().enableProfiling(mkdtempSync(join(tmpdir(), 'poptfjs-one-'))),
    });
    await executor.compile(tf.ones([1, 4]));
    const report = executor.getSummaryReport();
    expect(report).toContain('One IPU (no pipeline), 1 IPU(s) reserved');
    expect(report).not.toContain('PipelinedExecution');
    expect(report).toContain('pipeline bubble: none, the model runs on one IPU');
  });

  it('with profiling enabled, reports the simulated execution and the bubble, and writes the JSON, HTML and trace reports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-report-'));
    const executor = inferenceModel(pipelinedModel(), { options: new Options().deviceIterations(8).enableProfiling(dir) });
    await executor.compile(tf.ones([8, 16]));
    const report = executor.getSummaryReport();
    expect(report).toMatch(/cycles: \d+ \([\d.]+ ms at 1\.33 GHz\)/);
    expect(report).toMatch(
      /pipeline bubble: 27\.\d% of the schedule's IPU time idle, waiting while the pipeline fills and drains; more micro-batches per step \(device iterations\) make it smaller/,
    );
    expect(readdirSync(dir).sort()).toEqual(['anonymous_function-inference.html', 'anonymous_function-inference.json', 'anonymous_function-inference.trace.json']);
    const json = JSON.parse(readFileSync(join(dir, 'anonymous_function-inference.json'), 'utf8'));
    expect(json.hardware.timeline.cycles).toBe(executor.executable.hardware.timeline.cycles);
  });

  it("profiling can be enabled with POPTFJS_ENGINE_OPTIONS in Poplar's form", () => {
    expect(profileDirectory(undefined, { POPTFJS_ENGINE_OPTIONS: '{"autoReport.all":"true","autoReport.directory":"./reports"}' })).toBe('./reports');
    expect(profileDirectory(undefined, { POPTFJS_ENGINE_OPTIONS: '{"autoReport.all":"false"}' })).toBeUndefined();
    expect(profileDirectory('/chosen', { POPTFJS_ENGINE_OPTIONS: '{"autoReport.all":"true"}' })).toBe('/chosen');
    expect(() => profileDirectory(undefined, { POPTFJS_ENGINE_OPTIONS: '{oops' })).toThrow(/POPTFJS_ENGINE_OPTIONS:1:1: not valid JSON/);
  });

  it('the Chrome trace loads back as the Trace Event Format, one thread per IPU, each segment of the timeline an event of its length', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-trace-'));
    const executor = inferenceModel(pipelinedModel(), { options: new Options().deviceIterations(8) });
    await executor.compile(tf.ones([8, 16]));
    const { trace } = writeProfileReports(dir, executor.executable);
    const loaded = traceFile.parse(JSON.parse(readFileSync(trace, 'utf8')));
    const { timeline } = executor.executable.hardware;
    const threads = loaded.traceEvents.flatMap((e) => (e.ph === 'M' && e.name === 'thread_name' ? [[e.tid, e.args.name]] : []));
    expect(threads).toEqual([0, 1, 2, 3].map((ipu) => [ipu, `IPU ${ipu}`]));
    const events = loaded.traceEvents.flatMap((e) => (e.ph === 'X' ? [e] : []));
    expect(events).toHaveLength(timeline.segments.length);
    for (const ipu of timeline.ipus) {
      // Microseconds in the trace, seconds in the timeline; each event rounded to the nanosecond.
      const computeMicroseconds = events.filter((e) => e.tid === ipu.ipu && e.cat === 'compute').reduce((n, e) => n + e.dur, 0);
      expect(computeMicroseconds).toBeCloseTo(ipu.compute * 1e6, 2);
    }
    expect(Math.max(...events.map((e) => e.ts + e.dur))).toBeCloseTo(timeline.duration * 1e6, 2);
    expect(events.filter((e) => e.cat === 'compute').map((e) => e.name)).toContain('F3:7');
  });
});

describe.skipIf(!CHROMIUM)('each kind of report, rendered in headless Chromium', () => {
  const rendered = new Map<string, string>();
  beforeAll(async () => {
    for (const report of REPORT_GALLERY) {
      const files = await report.write(mkdtempSync(join(tmpdir(), `poptfjs-gallery-${report.name}-`)));
      rendered.set(report.name, renderedDom(files.html));
    }
  }, 300_000);

  it('has one timeline lane and one memory bar per IPU, the bubble explained, and the memory table, for every kind', () => {
    const ipus: Record<string, number> = { pipeline: 4, 'one-ipu': 1, plan: 2, session: 1 };
    expect([...rendered.keys()].sort()).toEqual(Object.keys(ipus).sort());
    for (const [name, dom] of rendered) {
      expect(dom.match(/<g class="lane" data-ipu="\d">/g), name).toHaveLength(ipus[name]!);
      expect(dom.match(/class="memory-row"/g), name).toHaveLength(ipus[name]!);
      expect(dom.match(/<table class="memory">.*?<\/table>/s)![0].match(/<tr>/g), name).toHaveLength(ipus[name]! + 1);
      expect(dom, name).toMatch(/<p class="note bubble">Pipeline bubble: /);
      expect(dom, name).toMatch(/Perfetto \(ui\.perfetto\.dev\) or chrome:\/\/tracing: \S+\.trace\.json\./);
    }
  });

  it('shows the figure of each memory part wide enough to hold it, on the scale of the fullest IPU for small models', () => {
    const dom = rendered.get('one-ipu')!;
    expect(dom).toMatch(/Bars are drawn to the scale of the fullest IPU, [\d.]+ KiB: each IPU's capacity, 897\.0 MiB, is far off this scale\./);
    // The fullest part spans most of the bar and carries its size.
    expect(dom).toMatch(/<span class="part" data-kind="temporary" style="width:[5-9]\d\.\d+%;[^"]*" title="temporary: [\d.]+ KiB">[\d.]+ KiB<\/span>/);
  });

  it('maps each block to its stage and IPU, and lists the layers with their weights and time, forward and backward', () => {
    const dom = rendered.get('plan')!;
    expect(dom).toMatch(/<tr><td>'features'<\/td><td>0 \(id 0\)<\/td><td>0<\/td><td>-<\/td><td class="number">3<\/td>/);
    expect(dom).toMatch(/<tr><td>'deeper'<\/td><td>1 \(id 1\)<\/td><td>1<\/td>/);
    expect(dom).toMatch(
      /<tr><td>conv_2<\/td><td>'features'<\/td><td>-<\/td><td class="number">0<\/td><td class="number">36\.1 KiB<\/td><td class="number">[\d.]+ µs<\/td><td class="number">[\d.]+ µs<\/td>/,
    );
    expect(dom).toContain('<th>backward per micro-batch</th>');
    expect(rendered.get('one-ipu')).not.toContain('<th>backward per micro-batch</th>');
    expect(rendered.get('one-ipu')).toContain('One IPU (no pipeline)');
    expect(rendered.get('session')).toMatch(/<tr><td>\/features\/features\.0\/Conv<\/td>/);
  });
});
