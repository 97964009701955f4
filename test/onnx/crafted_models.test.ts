/**
 * Crafted ONNX models: a valid model whose initializer declares more (or
 * other) than it stores must be refused when read, by `readModel` and by a
 * PopART session given the file, with the file's path and what is wrong, and
 * before anything of the declared size is allocated.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PoptfjsError, popart } from 'poptfjs';
import { readModel } from '../../lib/onnx/model_file.js';
import { encodeModelProto, type TensorProto } from '../../lib/onnx/onnx_proto.js';
import { floats, model, node, tensorValue } from './onnx_test_models.js';

const { AnchorReturnType, DataFlow, DeviceManager, InferenceSession } = popart;

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-crafted-onnx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let written = 0;

/** A file holding `y = x · w` (x: [2, 3], w: [3, 4]) with `edit` applied to w's TensorProto; its path. */
function craftedModel(edit: (w: TensorProto) => void): string {
  const m = model({
    nodes: [node('MatMul', ['x', 'w'], ['y'])],
    inputs: [tensorValue('x', [2, 3])],
    outputs: [tensorValue('y', [2, 4])],
    initializers: { w: floats([3, 4], Array.from({ length: 12 }, (_, i) => i)) },
  });
  edit(m.proto.graph!.initializer[0]!);
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
    expect(await refusal(() => readModel(path))).toBe(`${path}: tensor 'w': its shape [900000000, 1] needs 3600000000 bytes, but its external data in '${join(dir, 'w.bin')}' has 48`);
  });
});
