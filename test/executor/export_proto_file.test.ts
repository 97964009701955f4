/**
 * POPTFJS_EXPORT_PROTO_FILE (and PopTorch's POPTORCH_EXPORT_PROTO_FILE):
 * compiling writes the compiled graph as an ONNX model to the file named,
 * making its directory. Written from PopTorch's tests/options_test.py
 * (test_export_proto_file: `my_dir/my_model.proto` exists after the first
 * call of `x + y`) and poptorch/source/LowerToPopart.cpp (a path without an
 * extension is a directory holding `model.proto`).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inferenceModel, optim, trainingModel } from 'poptfjs';
import { decodeModelProto } from '../../lib/onnx/proto/onnx_proto.js';
import { tensorFromProto } from '../../lib/onnx/proto/tensor_proto_data.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'poptfjs-proto-'));
});
afterEach(() => {
  delete process.env.POPTFJS_EXPORT_PROTO_FILE;
  delete process.env.POPTORCH_EXPORT_PROTO_FILE;
  rmSync(dir, { recursive: true, force: true });
});

describe('POPTFJS_EXPORT_PROTO_FILE', () => {
  it("writes the compiled graph of x + y to POPTORCH_EXPORT_PROTO_FILE's file, making its directory (test_export_proto_file)", async () => {
    const file = join(dir, 'my_dir', 'my_model.proto');
    process.env.POPTORCH_EXPORT_PROTO_FILE = file;
    const executor = inferenceModel((x: tf.Tensor, y: tf.Tensor) => tf.add(x, y));
    tf.dispose(await executor(tf.ones([2]), tf.zeros([2])));
    expect(existsSync(file)).toBe(true);
    const model = decodeModelProto(readFileSync(file));
    const graph = model.graph!;
    expect(graph.node.map((n) => [n.domain, n.op_type])).toEqual([['ai.tfjs', 'Add']]);
    expect(graph.input.map((i) => i.name)).toEqual(['input0', 'input1']);
    expect(graph.input[0]!.type!.tensor_type!.shape!.dim.map((d) => d.dim_value)).toEqual([2]);
    expect(graph.node[0]!.input).toEqual(['input0', 'input1']);
    expect(graph.output.map((o) => o.name)).toEqual(graph.node[0]!.output);
    executor.destroy();
  });

  it('writes a training graph with its weights, loss and gradients; a path without an extension is a directory of model.proto', async () => {
    process.env.POPTFJS_EXPORT_PROTO_FILE = join(dir, 'protos');
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3], name: 'proto_fc', kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) })] });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
    const kernel = model.getWeights()[0]!.arraySync() as number[][];
    tf.dispose(await executor(tf.ones([4, 3]), tf.zeros([4, 2])));
    const graph = decodeModelProto(readFileSync(join(dir, 'protos', 'model.proto'))).graph!;
    const weight = graph.initializer.find((t) => t.name === model.layers[0]!.weights[0]!.name)!;
    // The weights as compiled: the values the step started from.
    expect(Array.from(tensorFromProto(weight).data as Float32Array)).toEqual(kernel.flat());
    expect(graph.node.some((n) => n.op_type === 'MatMul' || n.op_type === '_FusedMatMul')).toBe(true);
    expect(graph.output.map((o) => o.doc_string).filter((d) => d?.startsWith('Gradient___'))).toEqual(
      model.getWeights().map((_, i) => `Gradient___${model.layers[0]!.weights[i]!.name}`),
    );
    expect(JSON.parse(graph.node[0]!.doc_string!)).toMatchObject({ layer: 'proto_fc', pass: 'forward' });
    executor.destroy();
  });
});
