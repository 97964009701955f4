import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../lib/backend/backend_selection.js';
import { hostTensorToTf } from '../../lib/onnx/proto/host_tensor.js';
import { runImportedModel } from '../../lib/onnx/imported_model_run.js';
import { importedWeights, modelToBytes, writeModel } from '../../lib/onnx/model_export.js';
import { modelFromBytes, readModel } from '../../lib/onnx/model_file.js';
import { importModel } from '../../lib/onnx/model_import.js';
import { DATA_LOCATION, decodeTensorProto } from '../../lib/onnx/proto/onnx_proto.js';
import { tensorFromProto } from '../../lib/onnx/proto/tensor_proto_data.js';
import { expectClose } from '../helpers.js';

const CNN = fileURLToPath(new URL('../fixtures/onnx/torch/small_cnn.onnx', import.meta.url));
const CNN_INPUT = fileURLToPath(new URL('../fixtures/onnx/torch/small_cnn_input_0.pb', import.meta.url));

const PYTHON = '/usr/bin/python3';
const pythonOnnx = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import onnx'], { encoding: 'utf8' }).status === 0;

/** Runs the official ONNX checker (and a full load, external data included) on a model file. */
function onnxChecker(path: string): { status: number | null; stderr: string } {
  const check = 'import onnx, sys; onnx.checker.check_model(sys.argv[1]); onnx.load(sys.argv[1])';
  return spawnSync(PYTHON, ['-c', check, path], { encoding: 'utf8' });
}

function input(): tf.Tensor {
  return hostTensorToTf(tensorFromProto(decodeTensorProto(readFileSync(CNN_INPUT))), 'input');
}

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'poptfjs-onnx-'));
}

beforeAll(async () => {
  await initBackend();
});

describe('writing ONNX models with the current weights', () => {
  it('writes an imported model with its updated weights, which re-imports to the same numbers', () => {
    const imported = importModel(readModel(CNN));
    const weightName = imported.model.proto.graph!.initializer.find((t) => t.dims.length === 2)!.name!;
    const variable = imported.variables.get(imported.parameterNames.get(weightName)!)!;
    variable.assign(tf.mul(variable, 2));
    const expected = runImportedModel(imported, { input: input() }).get('output')!;
    const reimported = importModel(modelFromBytes(modelToBytes(imported)));
    expectClose(runImportedModel(reimported, { input: input() }).get('output')!, expected, 1e-6, 1e-6);
    expectClose(importedWeights(reimported).get(weightName)!, variable);
    imported.dispose();
    reimported.dispose();
  });

  it('replaces initializers by name and refuses unknown names and changed shapes', () => {
    const model = readModel(CNN);
    const bias = model.proto.graph!.initializer.find((t) => t.dims.length === 1 && t.dims[0] === 10)!;
    const written = modelFromBytes(modelToBytes(model, { weights: { [bias.name!]: tf.ones([10]) } }));
    expect(Array.from(tensorFromProto(written.proto.graph!.initializer.find((t) => t.name === bias.name)!).data as Float32Array)).toEqual(new Array(10).fill(1));
    expect(model.proto.graph!.initializer.find((t) => t.name === bias.name)).toBe(bias);
    expect(() => modelToBytes(model, { weights: { nope: tf.ones([1]) } })).toThrow("no initializer(s) named 'nope'");
    expect(() => modelToBytes(model, { weights: { [bias.name!]: tf.ones([11]) } })).toThrow(/has shape \[11\]; the initializer has shape \[10\]/);
  });

  it('moves large tensors to an external data file beside the model, and reads them back', () => {
    const dir = scratch();
    const path = join(dir, 'cnn.onnx');
    const imported = importModel(readModel(CNN));
    writeModel(path, imported, { externalData: { threshold: 256 } });
    expect(existsSync(join(dir, 'cnn.onnx.data'))).toBe(true);
    expect(() => modelFromBytes(readFileSync(path), { externalDataDirectory: join(dir, 'missing') })).toThrow(/its external data: cannot read .*: no such file/);
    const proto = readModel(path).proto;
    expect(proto.graph!.initializer.every((t) => t.data_location !== DATA_LOCATION.EXTERNAL)).toBe(true);
    const reimported = importModel(readModel(path));
    expectClose(runImportedModel(reimported, { input: input() }).get('output')!, runImportedModel(imported, { input: input() }).get('output')!, 1e-6, 1e-6);
    expect(readdirSync(dir).sort()).toEqual(['cnn.onnx', 'cnn.onnx.data']);
    imported.dispose();
    reimported.dispose();
  });

  it('explains a model whose external data was not loaded', () => {
    const dir = scratch();
    const path = join(dir, 'cnn.onnx');
    writeModel(path, readModel(CNN), { externalData: { threshold: 256 } });
    expect(() => modelFromBytes(readFileSync(path))).toThrow(/keeps its data in the external file 'cnn.onnx.data'; read the model with readModel\(path\)/);
  });

  it('leaves nothing behind when a write fails', () => {
    const dir = scratch();
    expect(() => writeModel(join(dir, 'no', 'such', 'dir.onnx'), readModel(CNN))).toThrow(/cannot write/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it.skipIf(!pythonOnnx)('writes models the official ONNX checker accepts, embedded and with external data', () => {
    const dir = scratch();
    const imported = importModel(readModel(CNN));
    writeModel(join(dir, 'embedded.onnx'), imported);
    writeModel(join(dir, 'external.onnx'), imported, { externalData: { location: 'weights.bin', threshold: 0 } });
    expect(statSync(join(dir, 'weights.bin')).size).toBeGreaterThan(1000);
    for (const file of ['embedded.onnx', 'external.onnx']) {
      const { status, stderr } = onnxChecker(join(dir, file));
      expect(stderr).toBe('');
      expect(status).toBe(0);
    }
    imported.dispose();
  });

  it.skipIf(!pythonOnnx)('reads external data written by the onnx Python package', () => {
    const dir = scratch();
    const save = [
      'import onnx, sys',
      'm = onnx.load(sys.argv[1])',
      "onnx.save_model(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True, location='tensors', size_threshold=0)",
    ].join('\n');
    const result = spawnSync(PYTHON, ['-c', save, CNN, join(dir, 'python.onnx')], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    const original = importModel(readModel(CNN));
    const external = importModel(readModel(join(dir, 'python.onnx')));
    expectClose(runImportedModel(external, { input: input() }).get('output')!, runImportedModel(original, { input: input() }).get('output')!, 0, 0);
    original.dispose();
    external.dispose();
  });
});
