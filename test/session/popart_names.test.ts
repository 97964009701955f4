import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { popart } from 'poptfjs';
import { expectAllClose, linearClassifier, linearModel, ramp } from './session_models.js';

const { AnchorReturnType, AnchorReturnTypeId, DataFlow, DeviceManager, InferenceSession, StepIO, StepIOCallback, TrainingSession, SessionOptions } = popart;

describe("PopART's names and older edition", () => {
  it('creates sessions with fnModel and dataFeed, and refuses an unknown argument by name with the one meant', async () => {
    const m = linearModel();
    const deviceInfo = new DeviceManager().createCpuDevice();
    const session = await InferenceSession.create({ fnModel: m.builder.getModelProto(), dataFeed: new DataFlow(1, { [m.out]: AnchorReturnType('ALL') }), deviceInfo });
    await session.prepareDevice();
    const anchors = session.initAnchorArrays();
    session.run(new StepIO({ [m.x]: ramp(6) }, anchors));
    expect(anchors[m.out]).toHaveLength(4);
    const model = m.builder.getModelProto();
    const dataFlow = new DataFlow(1, { [m.out]: AnchorReturnType('All') });
    await expect(InferenceSession.create({ model, dataFlow, deviceInfo, userOption: {} } as never)).rejects.toThrow(
      "InferenceSession.create: 'userOption' is not an argument of the session; did you mean userOptions?; the arguments are model, dataFlow, deviceInfo, inputShapeInfo, patterns, userOptions, name",
    );
    await expect(InferenceSession.create({ model, fnModel: model, dataFlow, deviceInfo } as never)).rejects.toThrow(
      "InferenceSession.create: 'fnModel' and 'model' are the same argument; give one",
    );
    await expect(InferenceSession.create({ dataFlow, deviceInfo } as never)).rejects.toThrow("InferenceSession.create: no model (PopART's fnModel) was given");
    const c = linearClassifier();
    await expect(
      TrainingSession.create({ fnModel: c.builder.getModelProto(), dataFlow, deviceInfo, loss: c.loss, optimiser: new popart.ConstSGD(0.1) } as never),
    ).rejects.toThrow(/TrainingSession\.create: 'optimiser' is not an argument of the session; did you mean optimizer\?/);
  });

  it("knows PopART's AnchorReturnTypeId names and createIpuModelDevice's numIPUs and tilesPerIPU", () => {
    expect([AnchorReturnTypeId.ALL, AnchorReturnTypeId.FINAL, AnchorReturnTypeId.SUM, AnchorReturnTypeId.EVERYN]).toEqual(['All', 'Final', 'Sum', 'EveryN']);
    expect(AnchorReturnType(AnchorReturnTypeId.ALL).id).toBe('All');
    const device = new DeviceManager().createIpuModelDevice({ numIPUs: 2, tilesPerIPU: 4 });
    expect([device.numIpus, device.tilesPerIPU]).toEqual([2, 4]);
    expect(() => new DeviceManager().createIpuModelDevice({ numIPU: 2 } as never)).toThrow(
      /^createIpuModelDevice: 'numIPU' is not an option of the device; did you mean numIpus\?; the options are numIpus, ipu, tiles, /,
    );
    expect(() => new DeviceManager().createIpuModelDevice({ numIpus: 2, numIPUs: 2 })).toThrow("createIpuModelDevice: 'numIPUs' and 'numIpus' are the same option; give one");
  });

  it('runs a step through StepIOCallback, one micro-batch of each input and one returned value of each anchor at a time, as StepIO does', async () => {
    const m = linearModel();
    const options = new SessionOptions();
    options.enableReplicatedGraphs = true;
    options.replicatedGraphCount = 2;
    const session = await InferenceSession.create({
      model: m.builder.getModelProto(),
      dataFlow: new DataFlow(3, { [m.out]: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createIpuModelDevice({ numIpus: 2 }),
      userOptions: options,
    });
    await session.prepareDevice();
    const x = ramp(3 * 2 * 2 * 3, 0.07);
    const anchors = session.initAnchorArrays();
    session.run(new StepIO({ [m.x]: x }, anchors));
    const events: string[] = [];
    let next = 0;
    const written: number[] = [];
    let pending: Float32Array | undefined;
    session.run(
      new StepIOCallback(
        (id, prefetch) => {
          events.push(`in ${id} ${prefetch}`);
          return x.subarray(next * 6, ++next * 6);
        },
        (id) => events.push(`in done ${id}`),
        (id) => {
          events.push(`out ${id}`);
          pending = new Float32Array(4);
          return pending;
        },
        (id) => {
          events.push(`out done ${id}`);
          written.push(...pending!);
        },
      ),
    );
    expect(next).toBe(6);
    expect(events.slice(0, 2)).toEqual(['in x false', 'in done x']);
    expect(events.filter((e) => e.startsWith('out done'))).toHaveLength(6);
    expectAllClose(written, anchors[m.out]!);
    expect(() =>
      session.run(
        new StepIOCallback(
          () => new Float32Array(5),
          () => undefined,
          () => new Float32Array(4),
          () => undefined,
        ),
      ),
    ).toThrow("inputCb('x') has 5 elements, expected 6 (shape [2, 3])");
  });

  it("gives the older edition's graph and execution reports as JSON, and its updateOptimizer and optimizerFromHost", async () => {
    const c = linearClassifier();
    const options = new SessionOptions();
    options.engineOptions = { 'autoReport.outputExecutionProfile': 'true', 'autoReport.directory': mkdtempSync(join(tmpdir(), 'poptfjs-reports-')) };
    const session = await TrainingSession.create({
      model: c.builder.getModelProto(),
      dataFlow: new DataFlow(1, { [c.loss]: AnchorReturnType('All') }),
      loss: c.loss,
      optimizer: new popart.SGD({ defaultLearningRate: [0.5, false] }),
      deviceInfo: new DeviceManager().createCpuDevice(),
      userOptions: options,
    });
    expect(() => session.optimizerFromHost()).toThrow('optimizerFromHost: the device is not prepared; call prepareDevice() first');
    await session.prepareDevice();
    const graph = JSON.parse(session.getGraphReport()) as { kind: string; programs: unknown[] };
    expect(graph.kind).toBe('training');
    expect(graph.programs).toHaveLength(4);
    const x = ramp(6, 0.2);
    const labels = Int32Array.from([0, 1]);
    const weights = () => {
      const w = { W: new Float32Array(6) };
      session.weightsToHost();
      session.readWeights(w);
      return w.W;
    };
    const step = () => session.run(new StepIO({ [c.x]: x, [c.labels]: labels }, session.initAnchorArrays()));
    step();
    expect((JSON.parse(session.getExecutionReport()) as { runs: number }).runs).toBe(1);
    // A learning rate of 0 set on the host changes nothing until optimizerFromHost copies it to the device.
    session.updateOptimizer(new popart.SGD({ defaultLearningRate: [0, false] }));
    const before = weights();
    step();
    const afterHostOnly = weights();
    expect(Array.from(afterHostOnly)).not.toEqual(Array.from(before));
    session.optimizerFromHost();
    step();
    expect(Array.from(weights())).toEqual(Array.from(afterHostOnly));
  });
});
