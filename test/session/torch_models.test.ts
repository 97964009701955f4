import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { onnx, popart } from 'poptfjs';
import { expectAllClose, ramp } from './session_models.js';

// Models exported by torch.onnx.export with scripts/make_onnx_fixtures.py, with PyTorch's outputs.
const FIXTURES = fileURLToPath(new URL('../fixtures/onnx/torch/', import.meta.url));

function fixture(file: string): onnx.HostTensor {
  return onnx.tensorFromProto(onnx.decodeTensorProto(readFileSync(FIXTURES + file)));
}

const { AnchorReturnType, Builder, DataFlow, DeviceManager, InferenceSession, StepIO, TrainingSession } = popart;

describe('sessions on models exported by PyTorch', () => {
  it("runs torchvision's SqueezeNet (the AlexNet-like model of the examples) as PyTorch does, within 1e-4", async () => {
    const input = fixture('squeezenet_input_0.pb');
    const session = await InferenceSession.create({
      model: `${FIXTURES}squeezenet.onnx`,
      dataFlow: new DataFlow(1, { output: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    await session.prepareDevice();
    const anchors = session.initAnchorArrays();
    session.run(new StepIO({ 'input.1': input.data as Float32Array }, anchors));
    expectAllClose(anchors.output!, fixture('squeezenet_output_0.pb').data as Float32Array, 1e-4);
    session.dispose();
  });

  it('runs the transformer encoder with its dynamic batch given in inputShapeInfo, tokens in an Int32Array', async () => {
    const tokens = fixture('small_transformer_input_0.pb');
    const session = await InferenceSession.create({
      model: `${FIXTURES}small_transformer.onnx`,
      dataFlow: new DataFlow(1, { output: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
      inputShapeInfo: { input: [3, 7] },
    });
    await session.prepareDevice();
    const anchors = session.initAnchorArrays();
    session.run(new StepIO({ input: Int32Array.from(tokens.data as Float64Array) }, anchors));
    expectAllClose(anchors.output!, fixture('small_transformer_output_0.pb').data as Float32Array, 1e-4);
    session.dispose();
  });

  it('trains every floating-point weight but batch-norm running statistics', async () => {
    const builder = new Builder();
    const x = builder.addInputTensor('FLOAT', [2, 2, 1, 1]);
    const param = (name: string, values: number[]) => builder.addInitializedInputTensor({ data: Float32Array.from(values), shape: [2] }, name);
    const y = builder.aiOnnx.batchnormalization([x, param('scale', [1, 2]), param('bias', [0, 1]), param('mean', [0.5, 0]), param('var', [1, 4])]);
    const loss = builder.aiGraphcore.l1loss([y], 1);
    const session = await TrainingSession.create({
      model: builder.getModelProto(),
      dataFlow: new DataFlow(1, {}),
      loss,
      optimizer: new popart.ConstSGD(0.1),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    expect(session.getTrainedWeightIds().sort()).toEqual(['bias', 'scale']);
    await session.prepareDevice();
    session.run(new StepIO({ [x]: ramp(4) }, {}));
    session.weightsToHost();
    const weights = { mean: new Float32Array(2), var: new Float32Array(2) };
    session.readWeights(weights);
    expect([...weights.mean, ...weights.var]).toEqual([0.5, 0, 1, 4]);
    session.dispose();
  });
});
