import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { popart } from 'poptfjs';
import { linearModel, ramp } from './session_models.js';

const { AnchorReturnType, Builder, DataFlow, DeviceManager, InferenceSession, SessionOptions, StepIO } = popart;

async function linearSession(configure: (o: popart.SessionOptions) => void = () => {}, ipu: 'GC200' | 'Bow' = 'GC200') {
  const m = linearModel();
  const options = new SessionOptions();
  configure(options);
  const session = await InferenceSession.create({
    model: m.builder.getModelProto(),
    dataFlow: new DataFlow(2, { [m.out]: AnchorReturnType('All') }),
    deviceInfo: new DeviceManager().createIpuModelDevice({ ipu }),
    userOptions: options,
  });
  await session.prepareDevice();
  return { m, session, stepio: new StepIO({ [m.x]: ramp(12) }, session.initAnchorArrays()) };
}

describe('reports, cycle counts and tensor information', () => {
  it('profiles the execution when the engine options ask, writing reports to autoReport.directory', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'poptfjs-reports-'));
    const { session, stepio } = await linearSession((o) => {
      o.engineOptions = { 'autoReport.all': 'true', 'autoReport.directory': directory };
      o.reportOptions = { showVarStorage: 'true', showExecutionSteps: 'true', showOptimizations: 'true' };
    });
    session.run(stepio);
    const summary = session.getSummaryReport();
    expect(summary).toMatch(/Simulated execution of one call:\n {2}cycles: \d+/);
    expect(summary).toMatch(/Variable storage:\n {2}IPU 0:\n.*weights +W/s);
    expect(summary).toMatch(/Execution steps \(simulated, per IPU\):\n/);
    expect(summary).toMatch(/\n {2}IPU 0 .* compute +F0:0\n/);
    expect(summary).toMatch(/Graph rewrites \(patterns\) that fired:/);
    expect(session.getReport().execution?.runs).toBe(1);
    expect(existsSync(join(directory, 'inference-inference.json'))).toBe(true);
    session.dispose();
  });

  it('says execution profiling is not enabled otherwise, and refuses engine options Poplar does not have', async () => {
    const { session, stepio } = await linearSession();
    session.run(stepio);
    expect(session.getSummaryReport()).toMatch(/Execution profiling not enabled: .*\n.*engineOptions \{ 'autoReport.all': 'true' \}/);
    expect(session.getReport().execution).toBeUndefined();
    expect(session.getReport().compilation).toHaveProperty('placement');
    session.dispose();
    await expect(linearSession((o) => (o.engineOptions = { 'autoReport.everything': 'true' }))).rejects.toThrow(
      /'autoReport.everything' is not a Poplar engine option; the options are debug.allowOutOfMemory/,
    );
    await expect(linearSession((o) => (o.engineOptions = { 'debug.instrument': 'yes' }))).rejects.toThrow(/\['debug.instrument'\] is 'yes'; expected "true" or "false"/);
    await expect(linearSession((o) => (o.reportOptions = { showEverything: 'true' } as never))).rejects.toThrow(
      /SessionOptions: unknown field\(s\) in reportOptions 'showEverything'; the fields are showVarStorage, showExecutionSteps, showOptimizations/,
    );
  });

  it('counts cycles when instrumented, after a run', async () => {
    const plain = await linearSession();
    plain.session.run(plain.stepio);
    expect(() => plain.session.getCycleCount()).toThrow(/set SessionOptions.instrumentWithHardwareCycleCounter = true/);
    plain.session.dispose();
    const { session, stepio } = await linearSession((o) => (o.instrumentWithHardwareCycleCounter = true));
    expect(() => session.getCycleCount()).toThrow(/has not run yet/);
    session.run(stepio);
    expect(session.getCycleCount()).toBeGreaterThan(0);
    // Cycles are counted at the device's tile clock: a Bow IPU computes the same cycles at 1.85 GHz instead of 1.33, in less time.
    const bow = await linearSession((o) => (o.instrumentWithHardwareCycleCounter = true), 'Bow');
    bow.session.run(bow.stepio);
    expect(bow.session.getCycleCount() / 1.85e9).toBeLessThan(session.getCycleCount() / 1.33e9);
    session.dispose();
    bow.session.dispose();
  });

  it('lists every tensor of the model with its shape, intermediate values included', async () => {
    const { m, session } = await linearSession();
    expect(session.getAllTensorIds().sort()).toEqual([m.b, m.h, m.out, m.w, m.x].sort());
    expect(session.getInfo(m.h)).toEqual({ shape: [2, 2], dataType: 'FLOAT' });
    expect(() => session.getInfo('nope')).toThrow(/no tensor 'nope'/);
    session.dispose();
  });

  it('makes random operators repeat under the same seed (setRandomSeed)', async () => {
    const builder = new Builder(undefined, { opset: 13 });
    const x = builder.addInputTensor('FLOAT', [64]);
    const ratio = builder.addInitializedInputTensor({ data: [0.5], shape: [], dtype: 'FLOAT' });
    const training = builder.addInitializedInputTensor({ data: new Uint8Array([1]), shape: [] });
    const y = builder.aiOnnx.dropout([x, ratio, training]);
    const session = await InferenceSession.create({
      model: builder.getModelProto(),
      dataFlow: new DataFlow(1, { [y]: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    await session.prepareDevice();
    const masks = [7, 7, 8].map((seed) => {
      session.setRandomSeed(seed);
      const anchors = session.initAnchorArrays();
      session.run(new StepIO({ [x]: new Float32Array(64).fill(1) }, anchors));
      return Array.from(anchors[y]!);
    });
    expect(masks[0]).toEqual(masks[1]);
    expect(masks[0]).not.toEqual(masks[2]);
    expect(new Set(masks[0])).toEqual(new Set([0, 2]));
    session.dispose();
  });
});
