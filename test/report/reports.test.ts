import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Block, Options, inferenceModel } from 'poptfjs';
import { profileDirectory } from '../../lib/report/profile_report.js';

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

const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

afterEach(() => {
  delete process.env.POPTFJS_ENGINE_OPTIONS;
});

describe('reports', () => {
  it('the summary report shows memory and placement, and says when execution profiling is not enabled', async () => {
    const executor = inferenceModel(pipelinedModel(), { options: new Options().deviceIterations(8) });
    await executor.compile(tf.ones([8, 16]));
    const report = executor.getSummaryReport();
    expect(report).toMatch(/Memory per IPU \(capacity 897\.0 MiB: 1472 tiles × 624\.0 KiB\):/);
    expect(report).toContain("stage 3 (id 3) on IPU 3: blocks 'layer3'");
    expect(report).toContain('Execution profiling not enabled');
  });

  it('with profiling enabled, reports the simulated execution and writes JSON and HTML reports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-report-'));
    const executor = inferenceModel(pipelinedModel(), { options: new Options().deviceIterations(8).enableProfiling(dir) });
    await executor.compile(tf.ones([8, 16]));
    const report = executor.getSummaryReport();
    expect(report).toMatch(/cycles: \d+ \([\d.]+ ms at 1\.33 GHz\)/);
    expect(report).toMatch(/pipeline bubble: 27\.\d% of the schedule's IPU time idle/);
    expect(readdirSync(dir).sort()).toEqual(['anonymous function-inference.html', 'anonymous function-inference.json'].map((n) => n.replace(' ', '_')).sort());
    const json = JSON.parse(readFileSync(join(dir, 'anonymous_function-inference.json'), 'utf8'));
    expect(json.hardware.timeline.cycles).toBe(executor.executable.hardware.timeline.cycles);
  });

  it("profiling can be enabled with POPTFJS_ENGINE_OPTIONS in Poplar's form", () => {
    expect(profileDirectory(undefined, { POPTFJS_ENGINE_OPTIONS: '{"autoReport.all":"true","autoReport.directory":"./reports"}' })).toBe('./reports');
    expect(profileDirectory(undefined, { POPTFJS_ENGINE_OPTIONS: '{"autoReport.all":"false"}' })).toBeUndefined();
    expect(profileDirectory('/chosen', { POPTFJS_ENGINE_OPTIONS: '{"autoReport.all":"true"}' })).toBe('/chosen');
    expect(() => profileDirectory(undefined, { POPTFJS_ENGINE_OPTIONS: '{oops' })).toThrow(/POPTFJS_ENGINE_OPTIONS:1:1: not valid JSON/);
  });

  it.skipIf(!chromium)('the HTML report renders in a browser with one timeline lane per IPU and a memory bar each', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-html-'));
    process.env.POPTFJS_ENGINE_OPTIONS = JSON.stringify({ 'autoReport.all': 'true', 'autoReport.directory': dir });
    const executor = inferenceModel(pipelinedModel(), { options: new Options().deviceIterations(8) });
    await executor.compile(tf.ones([8, 16]));
    const page = join(dir, 'anonymous_function-inference.html');
    const result = spawnSync(
      chromium!,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        `--user-data-dir=${mkdtempSync(join(tmpdir(), 'chromium-'))}`,
        '--dump-dom',
        `file://${page}`,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    const dom = result.stdout;
    expect(dom.match(/<g class="lane" data-ipu="\d">/g)).toHaveLength(4);
    expect(dom.match(/class="memory-row"/g)).toHaveLength(4);
    expect(dom).toContain('F3:7');
    expect(dom).toMatch(/<table class="placement">/);
  });
});
