import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { popart } from 'poptfjs';
import { executableCacheStatistics } from '../../lib/files/executable_cache.js';
import { expectAllClose, linearClassifier, ramp } from './session_models.js';

const { AnchorReturnType, DataFlow, DeviceManager, SessionOptions, StepIO, TrainingSession } = popart;

const LABELS = Int32Array.from([0, 1, 1, 0]);

async function classifierSession(name: string, batchesPerStep = 2, userOptions = new SessionOptions()) {
  const m = linearClassifier();
  const session = await TrainingSession.create({
    model: m.builder.getModelProto(),
    dataFlow: new DataFlow(batchesPerStep, { [m.loss]: AnchorReturnType('All') }),
    loss: m.loss,
    optimizer: new popart.SGD({ defaultLearningRate: [0.1, false] }),
    deviceInfo: new DeviceManager().createIpuModelDevice(),
    userOptions,
    name,
  });
  return { m, session };
}

function losses(m: ReturnType<typeof linearClassifier>, session: popart.TrainingSession): Float32Array {
  const anchors = session.initAnchorArrays();
  session.run(new StepIO({ [m.x]: ramp(12, 0.13), [m.labels]: LABELS }, anchors));
  return anchors[m.loss] as Float32Array;
}

describe('executables in files', () => {
  it('exports a compiled session and loads it into another session of the same model instead of compiling', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'poptfjs-exec-')), 'classifier.poptfjs');
    const exported = await classifierSession('exported');
    await exported.session.compileAndExport(path);
    await exported.session.prepareDevice();
    const expected = losses(exported.m, exported.session);
    exported.session.dispose();

    const loaded = await classifierSession('loaded');
    loaded.session.loadExecutable(path);
    await loaded.session.prepareDevice();
    expect(loaded.session.getSummaryReport()).toMatch(/^Model 'exported' compiled for training/);
    expectAllClose(losses(loaded.m, loaded.session), expected);
    expect(() => loaded.session.loadExecutable(path)).toThrow(/already compiled; load the executable before prepareDevice\(\)/);
    loaded.session.dispose();

    const other = await classifierSession('other', 4);
    expect(() => other.session.loadExecutable(path)).toThrow(
      /was compiled with other options than this session's: option deviceIterations is 2 in the file but 4 in the session/,
    );
    other.session.dispose();
  });

  it('caches executables in cachePath with enableEngineCaching, and reuses them', async () => {
    const cachePath = mkdtempSync(join(tmpdir(), 'poptfjs-cache-'));
    const options = new SessionOptions();
    options.enableEngineCaching = true;
    options.cachePath = cachePath;
    const before = executableCacheStatistics();
    const first = await classifierSession('cached', 2, options);
    await first.session.prepareDevice();
    const expected = losses(first.m, first.session);
    first.session.dispose();
    expect(readdirSync(cachePath).filter((f) => f.endsWith('.poptfjs'))).toHaveLength(1);
    const second = await classifierSession('cached', 2, options);
    await second.session.prepareDevice();
    expectAllClose(losses(second.m, second.session), expected);
    second.session.dispose();
    const after = executableCacheStatistics();
    expect(after.compilations - before.compilations).toBe(1);
    expect(after.memoryHits + after.diskHits - before.memoryHits - before.diskHits).toBe(1);
  });
});
