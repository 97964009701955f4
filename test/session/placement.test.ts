import { describe, expect, it } from 'vitest';
import { popart } from 'poptfjs';
import { expectAllClose, ramp } from './session_models.js';

const { AnchorReturnType, Builder, DataFlow, DeviceManager, SessionOptions, StepIO, TrainingSession } = popart;

type Placement = 'none' | 'ipus' | 'stages' | 'phases';

/** A two-layer classifier whose layers are placed as `placement` says; returns its model and tensor ids. */
function twoLayerClassifier(placement: Placement) {
  const builder = new Builder();
  const x = builder.addInputTensor('FLOAT', [2, 4], 'x');
  const labels = builder.addInputTensor('INT32', [2], 'labels');
  const w1 = builder.addInitializedInputTensor({ data: ramp(12, 0.05, -0.3), shape: [4, 3] }, 'w1');
  const w2 = builder.addInitializedInputTensor({ data: ramp(6, 0.1, -0.25), shape: [3, 2] }, 'w2');
  const layer = (index: number, fn: () => string) => {
    if (placement === 'ipus') return builder.virtualGraph(index, fn);
    if (placement === 'stages') return builder.virtualGraph(index, () => builder.pipelineStage(index, fn));
    if (placement === 'phases') return builder.executionPhase(index, fn);
    return fn();
  };
  const hidden = layer(0, () => builder.aiOnnx.tanh([builder.aiOnnx.matmul([x, w1])]));
  const loss = layer(1, () => {
    const probs = builder.aiOnnx.softmax([builder.aiOnnx.matmul([hidden, w2])], { axis: 1 });
    return builder.aiGraphcore.nllloss([probs, labels]);
  });
  return { model: builder.getModelProto(), x, labels, loss };
}

/** Trains for one step of 2 batches with 4 accumulated micro-batches each; returns the losses, the weights and the summary report. */
async function train(placement: Placement, configure: (options: popart.SessionOptions) => void) {
  const { model, x, labels, loss } = twoLayerClassifier(placement);
  const options = new SessionOptions();
  options.enableGradientAccumulation = true;
  options.accumulationFactor = 4;
  configure(options);
  const session = await TrainingSession.create({
    model,
    dataFlow: new DataFlow(2, { [loss]: AnchorReturnType('All') }),
    loss,
    optimizer: new popart.SGD({ defaultLearningRate: [0.2, false], defaultMomentum: [0.5, true] }),
    deviceInfo: new DeviceManager().createIpuModelDevice({ numIpus: 2 }),
    userOptions: options,
  });
  await session.prepareDevice();
  const anchors = session.initAnchorArrays();
  session.run(new StepIO({ [x]: ramp(2 * 4 * 8, 0.03), [labels]: Int32Array.from({ length: 16 }, (_, i) => ((i * 7) % 3) % 2) }, anchors));
  session.weightsToHost();
  const weights = { w1: new Float32Array(12), w2: new Float32Array(6) };
  session.readWeights(weights);
  const report = session.getSummaryReport();
  session.dispose();
  return { losses: anchors[loss]!, weights, report };
}

describe('placement from the virtual graph mode and the node attributes', () => {
  it('shards, pipelines, splits automatically and phases the graph as the options say, with the numbers of one IPU', async () => {
    const reference = await train('none', () => {});
    expect(reference.report).toMatch(/One IPU \(no pipeline\), 1 IPU\(s\) reserved/);
    const runs = [
      await train('ipus', (o) => (o.virtualGraphMode = 'Manual')),
      await train('stages', (o) => {
        o.virtualGraphMode = 'Manual';
        o.enablePipelining = true;
      }),
      await train('none', (o) => (o.virtualGraphMode = 'Auto')),
      await train('phases', (o) => {
        o.virtualGraphMode = 'ExecutionPhases';
        o.executionPhaseSettings = { phases: 2, stages: 2 };
      }),
    ];
    expect(runs[0]!.report).toMatch(/ShardedExecution: 2 stage\(s\) on 2 IPU\(s\) per replica/);
    expect(runs[0]!.report).toMatch(/stage 1 \(id 1\) on IPU 1: blocks 'ipu 1'/);
    expect(runs[1]!.report).toMatch(/PipelinedExecution: 2 stage\(s\) on 2 IPU\(s\) per replica/);
    expect(runs[1]!.report).toMatch(/blocks 'stage 1'/);
    expect(runs[2]!.report).toMatch(/ShardedExecution: 2 stage\(s\) on 2 IPU\(s\) per replica/);
    expect(runs[3]!.report).toMatch(/ParallelPhasedExecution: 2 stage\(s\) on 2 IPU\(s\) per replica/);
    expect(runs[3]!.report).toMatch(/stage 1 \(id 1\) on IPU 1, phase 1: blocks 'phase 1 ipu 1'/);
    for (const run of runs) {
      expectAllClose(run.losses, reference.losses);
      expectAllClose(run.weights.w1, reference.weights.w1);
      expectAllClose(run.weights.w2, reference.weights.w2);
    }
  });

  it('names the nodes without a placement, and the rules a placement breaks', async () => {
    const create = (placement: Placement, configure: (o: popart.SessionOptions) => void) => {
      const { model, loss } = twoLayerClassifier(placement);
      const options = new SessionOptions();
      configure(options);
      return TrainingSession.create({
        model,
        dataFlow: new DataFlow(1, {}),
        loss,
        optimizer: new popart.ConstSGD(0.1),
        deviceInfo: new DeviceManager().createIpuModelDevice({ numIpus: 2 }),
        userOptions: options,
      });
    };
    await expect(create('none', (o) => (o.virtualGraphMode = 'Manual'))).rejects.toThrow(
      /node\(s\) 'MatMul', 'Tanh', 'MatMul\/1', 'Softmax', 'Nll' have no __ipu_number attribute; with VirtualGraphMode.Manual every node needs one: set it with builder.virtualGraph/,
    );
    await expect(create('ipus', (o) => (o.enablePipelining = true))).rejects.toThrow(/enablePipelining needs virtualGraphMode Manual or Auto \(it is Off\)/);
    await expect(
      create('phases', (o) => {
        o.virtualGraphMode = 'ExecutionPhases';
        o.executionPhaseSettings = { phases: 1, stages: 2 };
      }),
    ).rejects.toThrow(/is in execution phase 1, but executionPhaseSettings.phases is 1; set it to at least 2/);
  });
});
