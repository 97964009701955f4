/**
 * Crafted ONNX models: a valid model whose initializer declares more (or
 * other) than it stores must be refused when read, by `readModel` and by a
 * PopART session given the file, with the file's path and what is wrong, and
 * before anything of the declared size is allocated.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { PoptfjsError, popart } from 'poptfjs';
import { readModel } from '../../lib/onnx/model_file.js';
import { importModel } from '../../lib/onnx/model_import.js';
import { encodeModelProto, type GraphProto, type TensorProto } from '../../lib/onnx/proto/onnx_proto.js';
import { floats, model, node, tensorValue } from './onnx_test_models.js';

const { AnchorReturnType, DataFlow, DeviceManager, InferenceSession } = popart;

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-crafted-onnx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let written = 0;

/** A file holding `y = x · w` (x: [2, 3], w: [3, 4]) with `edit` applied to w's TensorProto (and `editGraph` to the graph); its path. */
function craftedModel(edit: (w: TensorProto) => void, editGraph: (g: GraphProto) => void = () => {}): string {
  const m = model({
    nodes: [node('MatMul', ['x', 'w'], ['y'])],
    inputs: [tensorValue('x', [2, 3])],
    outputs: [tensorValue('y', [2, 4])],
    initializers: {
      w: floats(
        [3, 4],
        Array.from({ length: 12 }, (_, i) => i),
      ),
    },
  });
  edit(m.proto.graph!.initializer[0]!);
  editGraph(m.proto.graph!);
  const path = join(dir, `crafted-${++written}.onnx`);
  writeFileSync(path, encodeModelProto(m.proto));
  return path;
}

/** The message of the error `read` throws; fails if none, if not a PoptfjsError, or if it left more than 64 MB of array buffers allocated. */
async function refusal(read: () => unknown): Promise<string> {
  const before = process.memoryUsage().arrayBuffers;
  const error = await Promise.resolve()
    .then(read)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 2 ** 20);
  expect(error, 'the crafted model was accepted').toBeInstanceOf(PoptfjsError);
  return (error as Error).message;
}

function session(path: string) {
  return InferenceSession.create({ model: path, dataFlow: new DataFlow(1, { y: AnchorReturnType('All') }), deviceInfo: new DeviceManager().createCpuDevice() });
}

describe('crafted ONNX models', () => {
  it('an initializer declaring 3.6 GB with 48 bytes stored is refused by readModel and by a session, before it is allocated', async () => {
    const path = craftedModel((w) => (w.dims = [900_000_000, 1]));
    const expected = `${path}: tensor 'w' has 48 bytes of raw data for 900000000 FLOAT elements (shape [900000000, 1])`;
    expect(await refusal(() => readModel(path))).toBe(expected);
    expect(await refusal(() => session(path))).toBe(expected);
  });

  it('negative dimensions, unsupported element types and typed values of the wrong count are refused naming the file', async () => {
    const negative = craftedModel((w) => (w.dims = [-3, -4]));
    expect(await refusal(() => readModel(negative))).toBe(`${negative}: tensor 'w' has dimension 0 = -3 in shape [-3, -4]; dimensions are non-negative integers`);
    const type = craftedModel((w) => (w.data_type = 99));
    expect(await refusal(() => session(type))).toBe(`${type}: tensor 'w' has element type unknown element type 99, which poptfjs does not support`);
    const values = craftedModel((w) => {
      delete w.raw_data;
      w.float_data = [1, 2, 3];
    });
    expect(await refusal(() => readModel(values))).toBe(`${values}: tensor 'w' has 3 values for shape [3, 4]`);
  });

  it('external data of another size than the tensor declares is refused before it is read', async () => {
    writeFileSync(join(dir, 'w.bin'), new Uint8Array(48));
    const path = craftedModel((w) => {
      delete w.raw_data;
      w.data_location = 1;
      w.external_data = [{ key: 'location', value: 'w.bin' }];
      w.dims = [900_000_000, 1];
    });
    expect(await refusal(() => readModel(path))).toBe(
      `${path}: tensor 'w': its shape [900000000, 1] needs 3600000000 bytes, but its external data in '${join(dir, 'w.bin')}' has 48`,
    );
  });

  it('a graph input declared as 3.6 GB is refused naming the file and the input, before its zeros are allocated at import', async () => {
    const path = craftedModel(
      () => {},
      (g) => (g.input[0] = tensorValue('x', [900_000_000, 3])),
    );
    vi.stubEnv('POPTFJS_HOST_MEMORY_LIMIT', '64MiB');
    try {
      const expected =
        `${path}: graph input(s) 'x' FLOAT[900000000, 3] (10.1 GiB) take 10.1 GiB: more than half of the 56.0 MiB tensors may take in a heap of 64MiB (POPTFJS_HOST_MEMORY_LIMIT); ` +
        "the model is imported by evaluating its graph on zeros of its inputs' shapes, which needs room for the values computed from them too: give smaller shapes in inputShapeInfo";
      expect(await refusal(() => importModel(readModel(path)))).toBe(expected);
      expect(await refusal(() => session(path))).toBe(expected);
    } finally {
      vi.unstubAllEnvs();
    }
    const beyondMemory = craftedModel(
      () => {},
      (g) => (g.input[0] = tensorValue('x', [90_000_000_000, 3])),
    );
    expect(await refusal(() => session(beyondMemory))).toMatch(
      new RegExp(
        `^${beyondMemory}: graph input\\(s\\) 'x' FLOAT\\[90000000000, 3\\] \\(1005\\.8 GiB\\) take 1005\\.8 GiB: more than half of (this machine's .+ of memory|the .+ tensors may take in .+); the model is imported by evaluating its graph on zeros`,
      ),
    );
  });

  it('a graph input of [30000, 30000] is refused before its zeros are allocated: it and what the graph computes from it cannot both fit', async () => {
    const path = craftedModel(
      () => {},
      (g) => (g.input[0] = tensorValue('x', [30_000, 30_000])),
    );
    // 3.6e9 B of zeros, more than half of the 3.5 GiB tensors may take of a 4 GiB heap (the wasm backend's).
    vi.stubEnv('POPTFJS_HOST_MEMORY_LIMIT', '4GiB');
    try {
      expect(await refusal(() => importModel(readModel(path)))).toBe(
        `${path}: graph input(s) 'x' FLOAT[30000, 30000] (3.4 GiB) take 3.4 GiB: more than half of the 3.5 GiB tensors may take in a heap of 4GiB (POPTFJS_HOST_MEMORY_LIMIT); ` +
          "the model is imported by evaluating its graph on zeros of its inputs' shapes, which needs room for the values computed from them too: give smaller shapes in inputShapeInfo",
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a node reading a tensor nothing makes before it, a tensor made twice or a graph output nothing makes is refused naming the file and the node', async () => {
    const unknown = craftedModel(
      () => {},
      (g) => (g.node[0]!.input[1] = 'v'),
    );
    expect(await refusal(() => readModel(unknown))).toBe(`${unknown}: node #0 (MatMul) input 1 'v' is not a graph input, an initializer or the output of an earlier node`);
    const later = craftedModel(
      () => {},
      (g) => {
        g.node = [node('Relu', ['h'], ['y'], 'act'), node('MatMul', ['x', 'w'], ['h'], 'fc')];
      },
    );
    expect(await refusal(() => session(later))).toBe(`${later}: node #0 (Relu 'act') input 0 'h' is not a graph input, an initializer or the output of an earlier node`);
    const twice = craftedModel(
      () => {},
      (g) => g.node.push(node('Relu', ['x'], ['y'], 'again')),
    );
    expect(await refusal(() => readModel(twice))).toBe(`${twice}: node #1 (Relu 'again') output 0 is named 'y' like node #0 (MatMul) output 0; every tensor has one producer`);
    const shadow = craftedModel(
      () => {},
      (g) => (g.node[0]!.output[0] = 'x'),
    );
    expect(await refusal(() => readModel(shadow))).toBe(`${shadow}: node #0 (MatMul) output 0 is named 'x' like graph input 0; every tensor has one producer`);
    const missing = craftedModel(
      () => {},
      (g) => (g.output[0] = tensorValue('z', [2, 4])),
    );
    expect(await refusal(() => session(missing))).toBe(`${missing}: graph output 0 'z' is not a graph input, an initializer or the output of a node`);
  });
});
