/**
 * An attention block as `torch.onnx.export` writes one (per-head products
 * of batched matrices, `Linear` layers as `MatMul` then `Add`, one of them
 * through a `Reshape`) run by an `InferenceSession` on the wasm backend,
 * with its default patterns, against the imported model run on the cpu
 * backend without patterns.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { onnx, popart } from 'poptfjs';
import { expectAllClose } from './session_models.js';

const { AnchorReturnType, Builder, DataFlow, DeviceManager, InferenceSession, StepIO } = popart;

const TOKENS = 48;
const WIDTH = 64;
const HEADS = 2;
const HEAD = WIDTH / HEADS;

/** The attention block and its input's name and output's name. */
function attentionModel(): { model: Uint8Array; input: string; output: string } {
  const builder = new Builder();
  const weight = (shape: number[], seed: number) => builder.addInitializedInputTensor(tf.randomNormal(shape, 0, 0.2, 'float32', seed));
  const shape = (dims: number[]) => builder.addInitializedInputTensor(tf.tensor(dims, [dims.length], 'int32'));
  const x = builder.addInputTensor('FLOAT', [TOKENS, WIDTH]);
  const linear = (input: string, outputs: number, seed: number) =>
    builder.aiOnnx.add([builder.aiOnnx.matmul([input, weight([WIDTH, outputs], seed)]), weight([outputs], seed + 1)]);
  const heads = (input: string, perm: number[]) => builder.aiOnnx.transpose([builder.aiOnnx.reshape([input, shape([TOKENS, HEADS, HEAD])])], { perm });
  const q = heads(linear(x, WIDTH, 1), [1, 0, 2]);
  const kT = heads(linear(x, WIDTH, 3), [1, 2, 0]);
  const v = heads(linear(x, WIDTH, 5), [1, 0, 2]);
  const p = builder.aiOnnx.softmax([builder.aiOnnx.matmul([q, kT])], { axis: -1 });
  const joined = builder.aiOnnx.reshape([builder.aiOnnx.transpose([builder.aiOnnx.matmul([p, v])], { perm: [1, 0, 2] }), shape([TOKENS, WIDTH])]);
  const projected = linear(joined, WIDTH, 7);
  const hidden = builder.aiOnnx.matmul([projected, weight([WIDTH, 2 * WIDTH], 9)]);
  const activated = builder.aiOnnx.relu([builder.aiOnnx.add([builder.aiOnnx.reshape([hidden, shape([1, TOKENS, 2 * WIDTH])]), weight([2 * WIDTH], 10)])]);
  const output = builder.aiOnnx.matmul([activated, weight([2 * WIDTH, WIDTH], 11)]);
  builder.addOutputTensor(output);
  return { model: builder.getModelProto(), input: x, output };
}

describe('an attention block in a session', () => {
  it('gives on the wasm backend, with its patterns, what the cpu backend gives without them', async () => {
    const { model, input, output } = attentionModel();
    const values = tf.randomNormal([TOKENS, WIDTH], 0, 1, 'float32', 12).dataSync() as Float32Array;
    const session = await InferenceSession.create({
      model,
      dataFlow: new DataFlow(1, { [output]: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    await session.prepareDevice();
    const anchors = session.initAnchorArrays();
    session.run(new StepIO({ [input]: values }, anchors));
    session.dispose();
    expect(tf.getBackend()).toBe('wasm');
    await tf.setBackend('cpu');
    let expected: Float32Array;
    try {
      const imported = onnx.importModel(onnx.modelFromBytes(model));
      expected = onnx
        .runImportedModel(imported, { [input]: tf.tensor(values, [TOKENS, WIDTH]) })
        .get(output)!
        .dataSync() as Float32Array;
      imported.dispose();
    } finally {
      await tf.setBackend('wasm');
    }
    expect(expected.length).toBe(TOKENS * WIDTH);
    expectAllClose(anchors[output]!, expected, 1e-4);
  });
});
