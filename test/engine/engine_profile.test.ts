import { describe, expect, it } from 'vitest';
import { DeviceManager, Engine, Executable, GC200, type TextSink } from 'poptfjs';
import { exportedRegressor } from './engine_fixtures.js';

/** A text sink that keeps what is written. */
function sink(): TextSink & { text: string } {
  return {
    text: '',
    write(t: string) {
      this.text += t;
    },
  };
}

/** An engine of the regressor's training executable (host batches of 2) with `options`, loaded and with its step's streams connected. */
async function loadedEngine(seed: number, options: Record<string, string> = {}): Promise<Engine> {
  const { path } = await exportedRegressor(seed, 2);
  const engine = new Engine(Executable.fromFile(path), options);
  engine.load(new DeviceManager().createIpuModelDevice());
  engine.connectStream('input0', new Float32Array(10).fill(1));
  engine.connectStream('input1', new Float32Array(6).fill(0.5));
  engine.connectStream('output0', new Float32Array(6));
  engine.connectStream('loss', new Float32Array(1));
  return engine;
}

describe('Engine: time, profile and reports', () => {
  it("advances the device's clock by each program's simulated cycles: the step's timeline, the weights' bytes over the host link", async () => {
    const engine = await loadedEngine(31);
    const start = engine.getTimeStamp();
    engine.run(0);
    const afterWeights = engine.getTimeStamp();
    // 5×6 + 6 + 6×3 + 3 = 57 float32 weights, 228 bytes on the one IPU, over a 5.5 GB/s host link at 1.33 GHz: 55.13 → 56 cycles.
    expect(afterWeights.deviceCycles - start.deviceCycles).toBe(56);
    expect(Math.ceil((228 / GC200.hostLinkBandwidth) * GC200.clockHz)).toBe(56);
    engine.run(2);
    const afterStep = engine.getTimeStamp();
    expect(afterStep.deviceCycles - afterWeights.deviceCycles).toBe(engine.executable.hardware.timeline.cycles);
    const report = Engine.reportTiming(afterWeights, afterStep);
    const cycles = engine.executable.hardware.timeline.cycles;
    expect(report).toContain(`Device: ${cycles} cycles, ${((cycles / 1.33e9) * 1e3).toFixed(6)} ms at 1330.0 MHz (simulated)`);
    expect(report).toMatch(/\nHost: \d+\.\d{3} ms\n$/);
    expect(() => Engine.reportTiming(afterStep, afterWeights)).toThrow('reportTiming: the end was taken before the start');
  });

  it('records runs only when instrumented, at most executionProfileProgramRunCount per program, paused and reset on demand', async () => {
    const plain = await loadedEngine(32);
    plain.run(2);
    expect(plain.getReport().execution).toBeUndefined();
    expect(() => plain.reportIntervals(sink())).toThrow('reportIntervals: execution profiling is not enabled; set the engine option "debug.instrument" to "true"');
    const out = sink();
    plain.printProfileSummary(out);
    expect(out.text).toContain('Execution profiling not enabled');

    const engine = await loadedEngine(33, { 'debug.instrument': 'true' });
    const cycles = engine.executable.hardware.timeline.cycles;
    engine.run(0);
    for (const name of ['a', 'b', 'c']) engine.run(2, name);
    engine.run(3);
    const runs = engine.getReport().execution!.runs;
    expect(runs.map((r) => [r.program, r.name, r.debugName, r.cycles])).toEqual([
      [0, 'weightsFromHost', '', 56],
      [2, 'step', 'a', cycles],
      [2, 'step', 'b', cycles],
      [3, 'weightsToHost', '', 56],
    ]);
    expect(runs.map((r) => r.startCycle)).toEqual([0, 56, 56 + cycles, 56 + 3 * cycles]);
    expect(engine.getReport().execution!.totalCycles).toBe(112 + 2 * cycles);
    expect(engine.getReport(false).execution).toBeUndefined();
    engine.resetExecutionProfile();
    engine.disableExecutionProfiling();
    engine.run(2, 'unseen');
    engine.enableExecutionProfiling();
    engine.run(2, 'seen');
    expect(engine.getReport().execution!.runs.map((r) => r.debugName)).toEqual(['seen']);

    const three = await loadedEngine(34, { 'debug.instrument': 'true', 'autoReport.executionProfileProgramRunCount': '3' });
    for (let i = 0; i < 4; i++) three.run(2);
    expect(three.getReport().execution!.runs).toHaveLength(3);
  });

  it("prints Poplar's summary sections the options ask for, and refuses an option it does not have", async () => {
    const engine = await loadedEngine(35, { 'debug.instrument': 'true' });
    engine.run(2, 'first');
    const out = sink();
    engine.printProfileSummary(out, { showVarStorage: 'true', showExecutionSteps: 'true', showOptimizations: 'false' });
    expect(out.text).toContain('Memory per IPU');
    expect(out.text).toContain('Simulated execution of one call:');
    expect(out.text).toMatch(/Programs run \(execution profile\):\n +2 step +\d+ cycles from 0 {2}'first'/);
    expect(out.text).toContain('Variable storage:');
    expect(out.text).toContain('Execution steps (simulated, per IPU):');
    expect(out.text).not.toContain('Graph rewrites');
    expect(() => engine.printProfileSummary(sink(), { showEverything: 'true' })).toThrow(
      "printProfileSummary: 'showEverything' is not an option of the summary; the options are showVarStorage, showOptimizations, showExecutionSteps",
    );
    expect(() => engine.printProfileSummary(sink(), { showVarStorage: 'yes' })).toThrow(`printProfileSummary: option 'showVarStorage' is 'yes'; expected "true" or "false"`);
  });

  it("writes the step's activity as Poplar's CSV of intervals: tile counts of compute, exchange and sync over tile clock cycles", async () => {
    const engine = await loadedEngine(36, { 'debug.instrument': 'true' });
    engine.run(0);
    engine.run(2);
    const out = sink();
    engine.reportIntervals(out);
    const rows = out.text
      .trim()
      .split('\n')
      .map((line) => line.split(',').map(Number));
    const { segments } = engine.executable.hardware.timeline;
    // One IPU: its segments follow one another, so each interval has all 1472 tiles in exactly one kind of work.
    for (const [begin, end, compute, exchange, sync] of rows) {
      expect(end!).toBeGreaterThan(begin!);
      expect([compute, exchange, sync].filter((n) => n !== 0)).toEqual([1472]);
    }
    // The step began after the weights' 56 cycles; the intervals cover the cycles of its segments.
    const toCycles = (s: number) => Math.round(s * 1.33e9);
    expect(rows[0]![0]).toBe(56 + toCycles(segments[0]!.start));
    const busy = segments.reduce((n, s) => n + toCycles(s.end) - toCycles(s.start), 0);
    expect(rows.reduce((n, [begin, end]) => n + end! - begin!, 0)).toBe(busy);
  });
});
