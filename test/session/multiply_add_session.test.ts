import { describe, expect, it } from 'vitest';
import { popart } from 'poptfjs';
import { expectAllClose, ramp } from './session_models.js';
import { withRelaxedSimd } from '../helpers.js';

const { AnchorReturnType, Builder, DataFlow, DeviceManager, InferenceSession, Patterns, SessionOptions, StepIO } = popart;

withRelaxedSimd();

/** conv 3 × 3 (8 → 16) → relu → max pool 2 → conv 1 × 1 (16 → 12) → relu, on a [1, 8, 32, 32] input. */
function cnn() {
  const builder = new Builder();
  const x = builder.addInputTensor('FLOAT', [1, 8, 32, 32], 'x');
  const weight = (name: string, shape: number[]) =>
    builder.addInitializedInputTensor(
      {
        data: ramp(
          shape.reduce((a, b) => a * b, 1),
          0.013,
          -0.7,
        ),
        shape,
      },
      name,
    );
  const h = builder.aiOnnx.relu([builder.aiOnnx.conv([x, weight('w1', [16, 8, 3, 3]), weight('b1', [16])], { pads: [1, 1, 1, 1] })]);
  const pooled = builder.aiOnnx.maxpool([h], { kernel_shape: [2, 2], strides: [2, 2] });
  const y = builder.aiOnnx.relu([builder.aiOnnx.conv([pooled, weight('w2', [12, 16, 1, 1]), weight('b2', [12])])], {}, 'y');
  builder.addOutputTensor(y);
  return { builder, x, y };
}

async function run(fused: boolean): Promise<{ output: Float32Array; summary: string }> {
  const m = cnn();
  const options = new SessionOptions();
  options.reportOptions = { showOptimizations: 'true' };
  const session = await InferenceSession.create({
    model: m.builder.getModelProto(),
    dataFlow: new DataFlow(1, { [m.y]: AnchorReturnType('All') }),
    deviceInfo: new DeviceManager().createCpuDevice(),
    patterns: new Patterns('Default').enablePattern('MultiplyAddConvolution', fused),
    userOptions: options,
  });
  try {
    await session.prepareDevice();
    const anchors = session.initAnchorArrays();
    session.run(new StepIO({ [m.x]: ramp(8 * 32 * 32, 0.001) }, anchors));
    return { output: Float32Array.from(anchors[m.y]!), summary: session.getSummaryReport() };
  } finally {
    session.dispose();
  }
}

describe('an ONNX session with fused multiply-adds', () => {
  it('runs its convolutions with fused multiply-adds where the engine has relaxed SIMD, with the outputs of XNNPACK within rounding', async () => {
    const fused = await run(true);
    const separate = await run(false);
    expect(fused.summary).toMatch(/MultiplyAddConvolution ×2/);
    expect(separate.summary).not.toMatch(/MultiplyAddConvolution/);
    expectAllClose(fused.output, separate.output, 1e-5);
    expect(fused.output.some((v, i) => v !== separate.output[i])).toBe(true);
  });
});
