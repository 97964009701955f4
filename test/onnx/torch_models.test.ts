import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../lib/backend/backend_selection.js';
import { hostTensorToTf } from '../../lib/onnx/proto/host_tensor.js';
import { runImportedModel } from '../../lib/onnx/imported_model_run.js';
import { readModel } from '../../lib/onnx/model_file.js';
import { importModel } from '../../lib/onnx/model_import.js';
import { decodeTensorProto } from '../../lib/onnx/proto/onnx_proto.js';
import { tensorFromProto } from '../../lib/onnx/proto/tensor_proto_data.js';

// Models exported by torch.onnx.export with scripts/make_onnx_fixtures.py, with PyTorch's outputs.
const FIXTURES = fileURLToPath(new URL('../fixtures/onnx/torch/', import.meta.url));

function fixtureTensor(file: string): tf.Tensor {
  return hostTensorToTf(tensorFromProto(decodeTensorProto(readFileSync(FIXTURES + file))), file);
}

function maxAbsDifference(a: tf.Tensor, b: tf.Tensor): number {
  expect(a.shape).toEqual(b.shape);
  return tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]!;
}

beforeAll(async () => {
  await initBackend();
});

describe('models exported by torch.onnx.export', () => {
  const cases = [
    { name: 'small_cnn', shapes: undefined, kernels: ['FusedConv2D', 'MaxPool', 'BatchMatMul'] },
    { name: 'small_resnet', shapes: undefined, kernels: ['FusedConv2D', 'Relu'] },
    { name: 'small_transformer', shapes: { input: [3, 7] }, kernels: ['GatherV2', 'Softmax', 'Erf'] },
    { name: 'small_lstm', shapes: undefined, kernels: ['BatchMatMul', 'Sigmoid', 'Tanh'] },
  ];
  for (const { name, shapes, kernels } of cases) {
    it(`runs ${name} and matches PyTorch within 1e-4`, () => {
      const imported = importModel(readModel(`${FIXTURES}${name}.onnx`), shapes ? { inputShapeInfo: shapes } : {});
      const used = new Set(imported.graph.nodes.map((n) => n.kernel));
      for (const kernel of kernels) expect(used).toContain(kernel);
      expect(imported.graph.nodes.every((n) => n.annotations.layer !== undefined)).toBe(true);
      const input = fixtureTensor(`${name}_input_0.pb`);
      const output = runImportedModel(imported, { input }).get('output')!;
      expect(maxAbsDifference(output, fixtureTensor(`${name}_output_0.pb`))).toBeLessThan(1e-4);
      imported.dispose();
    });
  }

  it('names the exported layers in the IR annotations', () => {
    const imported = importModel(readModel(`${FIXTURES}small_resnet.onnx`));
    const layers = new Set(imported.graph.nodes.map((n) => n.annotations.layer));
    expect([...layers].some((l) => l?.startsWith('/blocks/blocks.1/downsample'))).toBe(true);
    imported.dispose();
  });

  it('needs the dynamic batch size of the transformer in inputShapeInfo', () => {
    expect(() => importModel(readModel(`${FIXTURES}small_transformer.onnx`))).toThrow(/'input' \[batch, 7\]/);
  });
});
