import { describe, expect, it } from 'vitest';
import { DeviceManager, Engine, Executable, type StepInstrumentation } from 'poptfjs';
import { exportedRegressor } from './engine_fixtures.js';

/** What one run of the step records on the regressor's training engine (1 IPU, host batches of 2) with `options`; undefined when nothing is recorded. */
async function stepRecord(seed: number, options: Record<string, string>): Promise<{ engine: Engine; record: StepInstrumentation | undefined; recorded: boolean }> {
  const { path } = await exportedRegressor(seed, 2);
  const engine = new Engine(Executable.fromFile(path), options);
  engine.load(new DeviceManager().createIpuModelDevice());
  engine.connectStream('input0', new Float32Array(10).fill(1));
  engine.connectStream('input1', new Float32Array(6).fill(0.5));
  engine.connectStream('output0', new Float32Array(6));
  engine.connectStream('loss', new Float32Array(1));
  engine.run(0);
  engine.run(2);
  const runs = engine.getReport().execution?.runs ?? [];
  return { engine, record: runs.find((r) => r.name === 'step')?.instrumentation, recorded: runs.length > 0 };
}

/** Cycles of the timeline's segments of `kind` on IPU 0 whose label, without micro-batch indices, is `name` (any, if not given): the last one's. */
function lastSegmentCycles(engine: Engine, kind: string, name?: string): number {
  const { timeline, spec } = engine.executable.hardware;
  const last = timeline.segments.filter((s) => s.kind === kind && (name === undefined || s.label.replace(/:\d+/g, '') === name)).at(-1)!;
  return Math.round((last.end - last.start) * spec.clockHz);
}

describe('Engine instrumentation options', () => {
  it('debug.instrument records every kind: compute sets at the tile level, exchanges with the host, and the loops on the branch-record tile', async () => {
    const { engine, record } = await stepRecord(71, { 'debug.instrument': 'true' });
    // One stage, trained: the step runs its forward and backward passes in one compute set, then the weight update; each counted on every tile of IPU 0.
    expect(record!.computeSets!.map((c) => [c.ipu, c.name, c.tile])).toEqual([
      [0, 'F0 B0', 'every'],
      [0, 'update', 'every'],
    ]);
    expect(record!.computeSets![0]!.cycles).toBe(lastSegmentCycles(engine, 'compute', 'F0 B0'));
    expect(record!.computeSets![1]!.cycles).toBe(lastSegmentCycles(engine, 'update'));
    expect(record!.vertices).toBeUndefined();
    expect(record!.externalExchanges!.map((e) => [e.ipu, e.name])).toEqual([
      [0, 'host → device'],
      [0, 'device → host'],
    ]);
    expect(record!.externalExchanges![0]!.cycles).toBe(lastSegmentCycles(engine, 'host', 'host → device'));
    // One device iteration, no gradient accumulation; the default branch-record tile is the device's last (1472 tiles, 1 IPU).
    expect(record!.controlFlow).toEqual({ tile: 1471, loops: [{ loop: 'deviceIterations', iterations: 1 }] });
  });

  it("debug.computeInstrumentationLevel: ipu stores each compute set's count on debug.profilingTile, device once for the device, vertex counts every kernel", async () => {
    const ipu = await stepRecord(72, { 'debug.instrumentCompute': 'true', 'debug.computeInstrumentationLevel': 'ipu', 'debug.profilingTile': '5' });
    expect(ipu.record!.computeSets!.map((c) => c.tile)).toEqual([5, 5]);
    expect(ipu.record!.externalExchanges).toBeUndefined();
    expect(ipu.record!.controlFlow).toBeUndefined();
    const device = await stepRecord(73, { 'debug.instrumentCompute': 'true', 'debug.computeInstrumentationLevel': 'device' });
    expect(device.record!.computeSets!.map((c) => [c.name, c.tile])).toEqual([
      ['F0 B0', 1471],
      ['update', 1471],
    ]);
    const vertex = await stepRecord(74, { 'debug.instrumentCompute': 'true', 'debug.computeInstrumentationLevel': 'vertex' });
    const { graph } = vertex.engine.executable;
    const vertices = vertex.record!.vertices!;
    expect(vertex.record!.computeSets).toBeUndefined();
    expect(vertices.map((v) => [v.ipu, v.node, v.vertex])).toEqual(graph.nodes.map((n) => [0, n.id, n.kernel]));
    // The compute set runs the step's kernels one after another: their counts add up to its count, each rounded to a whole cycle.
    expect(vertices.every((v) => Number.isInteger(v.cycles))).toBe(true);
    expect(Math.abs(vertices.reduce((n, v) => n + v.cycles, 0) - lastSegmentCycles(vertex.engine, 'compute', 'F0 B0'))).toBeLessThanOrEqual(vertices.length / 2);
  });

  it('records only what is switched on; the execution profile of autoReport sets debug.instrument unless it is set', async () => {
    const control = await stepRecord(75, { 'debug.instrumentControlFlow': 'true', 'debug.branchRecordTile': '7' });
    expect(control.record).toEqual({ controlFlow: { tile: 7, loops: [{ loop: 'deviceIterations', iterations: 1 }] } });
    const profiled = await stepRecord(76, { 'autoReport.outputExecutionProfile': 'true', 'autoReport.directory': '/tmp/poptfjs-unused' });
    expect(Object.keys(profiled.record!)).toEqual(['computeSets', 'externalExchanges', 'controlFlow']);
    const declined = await stepRecord(77, { 'autoReport.outputExecutionProfile': 'true', 'autoReport.directory': '/tmp/poptfjs-unused', 'debug.instrument': 'false' });
    expect(declined.recorded).toBe(false);
    const off = await stepRecord(78, { 'debug.instrument': 'true', 'debug.instrumentCompute': 'false', 'debug.instrumentExternalExchange': 'false' });
    expect(Object.keys(off.record!)).toEqual(['controlFlow']);
  });
});
