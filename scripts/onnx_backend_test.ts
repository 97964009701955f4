/**
 * One case of the ONNX backend test suite, as Debian's libonnx-testdata ships
 * it: a directory with `model.onnx` and `test_data_set_*` directories of
 * `input_N.pb` / `output_N.pb` TensorProtos. Running a case imports the model,
 * runs it on the test inputs and compares the outputs with the expected ones.
 *
 * Nodes that need an input known at import (Reshape's shape, Slice's starts,
 * ...) get the case's value of that graph input as a constant input
 * (`constantInputs`), as a model that ships the value as an initializer would.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { hostTensorToTf, type HostTensor } from '../lib/onnx/proto/host_tensor.js';
import { runImportedModel } from '../lib/onnx/imported_model_run.js';
import { readModel } from '../lib/onnx/model_file.js';
import { importModel, type ImportedModel } from '../lib/onnx/model_import.js';
import { checkModelSupported } from '../lib/onnx/model_support.js';
import { OnnxConstantInputError, OnnxUnsupportedError } from '../lib/onnx/proto/onnx_errors.js';
import { decodeTensorProto } from '../lib/onnx/proto/onnx_proto.js';
import { tensorFromProto } from '../lib/onnx/proto/tensor_proto_data.js';

/** Where libonnx-testdata installs the test data. */
export const BACKEND_TEST_DATA = '/usr/share/libonnx-testdata/data';

/** The suites the conformance run covers. */
export const BACKEND_TEST_SUITES = ['node', 'pytorch-converted', 'pytorch-operator'] as const;

/** How to get the test data when it is missing. */
export const INSTALL_HINT = `the ONNX backend test data is not installed (${BACKEND_TEST_DATA}); install it with: apt-get install libonnx-testdata`;

/**
 * Tolerance of float comparisons: ONNX's backend runner uses rtol 1e-3 and
 * atol 1e-7; poptfjs computes in float32 (doubles included), so atol is 1e-5.
 */
export const TOLERANCE = { rtol: 1e-3, atol: 1e-5 };

/** The outcome of one case. */
export interface BackendTestResult {
  /** `suite/test_name`. */
  readonly id: string;
  readonly status: 'passed' | 'failed' | 'unsupported';
  /** Why it failed or is unsupported; the constant inputs it needed when it passed. */
  readonly detail: string;
}

/** True if the test data is installed. */
export function backendTestDataInstalled(): boolean {
  return existsSync(join(BACKEND_TEST_DATA, 'node'));
}

/** The case ids (`suite/test_name`) of a suite, sorted. */
export function backendTestIds(suite: string): string[] {
  return readdirSync(join(BACKEND_TEST_DATA, suite))
    .filter((name) => existsSync(join(BACKEND_TEST_DATA, suite, name, 'model.onnx')))
    .sort()
    .map((name) => `${suite}/${name}`);
}

interface DataSet {
  inputs: HostTensor[];
  inputNames: (string | undefined)[];
  outputs: HostTensor[];
}

function readTensors(dir: string, prefix: string): { values: HostTensor[]; names: (string | undefined)[] } {
  const files = readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith('.pb'))
    .sort((a, b) => Number(a.slice(prefix.length, -3)) - Number(b.slice(prefix.length, -3)));
  const protos = files.map((f) => decodeTensorProto(readFileSync(join(dir, f))));
  return { values: protos.map(tensorFromProto), names: protos.map((p) => p.name || undefined) };
}

function readDataSets(caseDir: string): DataSet[] {
  return readdirSync(caseDir)
    .filter((d) => d.startsWith('test_data_set_'))
    .sort()
    .map((d) => {
      const inputs = readTensors(join(caseDir, d), 'input_');
      return { inputs: inputs.values, inputNames: inputs.names, outputs: readTensors(join(caseDir, d), 'output_').values };
    });
}

/** The first difference between `actual` and `expected` beyond {@link TOLERANCE}, or undefined. */
export function firstMismatch(actual: tf.Tensor, expected: HostTensor): string | undefined {
  const shape = [...expected.shape];
  if (actual.shape.length !== shape.length || actual.shape.some((d, i) => d !== shape[i])) {
    return `shape [${actual.shape.join(', ')}], expected [${shape.join(', ')}]`;
  }
  const got = actual.dataSync() as unknown as ArrayLike<number | string>;
  const want = expected.data as ArrayLike<number | string>;
  for (let i = 0; i < want.length; i++) {
    const a = got[i]!;
    const e = want[i]!;
    if (typeof e === 'string' || typeof a === 'string') {
      if (String(a) !== String(e)) return `element ${i}: ${a}, expected ${e}`;
      continue;
    }
    if (Number.isNaN(e) && Number.isNaN(a)) continue;
    if (a === e) continue;
    if (!(Math.abs(a - e) <= TOLERANCE.atol + TOLERANCE.rtol * Math.abs(e))) return `element ${i}: ${a}, expected ${e}`;
  }
  return undefined;
}

/** The graph inputs of a model that test inputs feed, in order: those without an initializer. */
function feedableInputs(caseDir: string): string[] {
  const graph = readModel(join(caseDir, 'model.onnx')).proto.graph!;
  const initializers = new Set(graph.initializer.map((t) => t.name));
  return graph.input.map((v) => v.name ?? '').filter((name) => !initializers.has(name));
}

/** Imports a case's model, giving graph inputs as constants when nodes need them at import. */
function importCase(caseDir: string, feeds: Map<string, HostTensor>): { imported: ImportedModel; constants: string[] } {
  const model = readModel(join(caseDir, 'model.onnx'));
  const constantInputs = new Map<string, HostTensor>();
  for (;;) {
    const inputShapeInfo = new Map([...feeds].filter(([name]) => !constantInputs.has(name)).map(([name, v]) => [name, v.shape]));
    try {
      return { imported: importModel(model, { inputShapeInfo, constantInputs }), constants: [...constantInputs.keys()] };
    } catch (error) {
      if (!(error instanceof OnnxConstantInputError) || constantInputs.has(error.inputName) || !feeds.has(error.inputName)) throw error;
      constantInputs.set(error.inputName, feeds.get(error.inputName)!);
    }
  }
}

function runDataSet(caseDir: string, data: DataSet): string | undefined {
  const names = feedableInputs(caseDir);
  const feeds = new Map<string, HostTensor>(
    data.inputs.map((value, i) => [data.inputNames[i] && names.includes(data.inputNames[i]!) ? data.inputNames[i]! : names[i]!, value]),
  );
  const { imported } = importCase(caseDir, feeds);
  const inputs = new Map(imported.inputNames.map((name) => [name, hostTensorToTf(feeds.get(name)!, `input '${name}'`)]));
  try {
    const outputs = runImportedModel(imported, inputs);
    try {
      const graphOutputs = imported.model.proto.graph!.output.map((v) => v.name ?? '');
      for (let i = 0; i < data.outputs.length; i++) {
        const mismatch = firstMismatch(outputs.get(graphOutputs[i]!)!, data.outputs[i]!);
        if (mismatch) return `output ${i} '${graphOutputs[i]}': ${mismatch}`;
      }
      return undefined;
    } finally {
      tf.dispose([...outputs.values()]);
    }
  } finally {
    tf.dispose([...inputs.values()]);
    imported.dispose();
  }
}

/** Runs one case (`suite/test_name`). */
export function runBackendTest(id: string): BackendTestResult {
  const caseDir = join(BACKEND_TEST_DATA, id);
  try {
    checkModelSupported(readModel(join(caseDir, 'model.onnx')).proto);
    const dataSets = readDataSets(caseDir);
    if (dataSets.length === 0) return { id, status: 'failed', detail: 'no test data sets' };
    for (const data of dataSets) {
      const mismatch = tf.tidy(() => runDataSet(caseDir, data));
      if (mismatch) return { id, status: 'failed', detail: mismatch };
    }
    return { id, status: 'passed', detail: '' };
  } catch (error) {
    if (error instanceof OnnxUnsupportedError)
      return {
        id,
        status: 'unsupported',
        detail: error.unsupported
          .map((u) => u.what)
          .filter((w, i, all) => all.indexOf(w) === i)
          .join('; '),
      };
    return { id, status: 'failed', detail: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
  }
}
