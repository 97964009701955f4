import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bfloat16BitsToFloat, floatToBfloat16Bits, floatToHalfBits, halfBitsToFloat } from '../../lib/onnx/proto/half_precision.js';
import { modelFromBytes } from '../../lib/onnx/model_file.js';
import { OnnxElementType } from '../../lib/onnx/proto/onnx_element_type.js';
import { decodeTensorProto, encodeModelProto, encodeTensorProto, type TensorProto } from '../../lib/onnx/proto/onnx_proto.js';
import { tensorFromProto, tensorToProto } from '../../lib/onnx/proto/tensor_proto_data.js';
import { onnxProtoDescriptorSource } from '../../scripts/onnx_proto_descriptor_source.js';
import { floats, model, node, tensorValue } from './onnx_test_models.js';

function emptyTensor(fields: Partial<TensorProto>): TensorProto {
  return {
    dims: [],
    float_data: [],
    int32_data: [],
    string_data: [],
    int64_data: [],
    double_data: [],
    uint64_data: [],
    external_data: [],
    ...fields,
  };
}

describe('the ONNX schema', () => {
  it('is loaded from a descriptor generated from the committed onnx.proto', () => {
    const committed = readFileSync(fileURLToPath(new URL('../../lib/onnx/proto/generated/onnx_proto_descriptor.ts', import.meta.url)), 'utf8');
    expect(committed).toBe(onnxProtoDescriptorSource());
  });

  it('round-trips a model through bytes', () => {
    const m = model({
      nodes: [node('Relu', ['X'], ['Y'], 'relu', { alpha: 0.5 })],
      inputs: [tensorValue('X', ['n', 2])],
      outputs: [tensorValue('Y', ['n', 2])],
      initializers: { W: floats([2], [1.5, -2]) },
    });
    const back = modelFromBytes(encodeModelProto(m.proto)).proto;
    expect(back.graph!.node[0]).toMatchObject({ op_type: 'Relu', name: 'relu', input: ['X'], output: ['Y'] });
    expect(back.graph!.node[0]!.attribute[0]).toMatchObject({ name: 'alpha', f: 0.5 });
    expect(back.graph!.input[0]!.type!.tensor_type!.shape!.dim).toEqual([{ dim_param: 'n' }, { dim_value: 2 }]);
    expect(Array.from(tensorFromProto(back.graph!.initializer[0]!).data as Float32Array)).toEqual([1.5, -2]);
  });

  it('refuses bytes that are not a model', () => {
    expect(() => modelFromBytes(new Uint8Array([0xff, 0xff, 0xff, 0x07]))).toThrow(/not an ONNX model/);
  });
});

describe('tensor data', () => {
  it('reads int64 raw data exactly up to 2^53 and keeps INT64_MAX as a double', () => {
    const raw = new Uint8Array(24);
    const view = new DataView(raw.buffer);
    view.setBigInt64(0, -5n, true);
    view.setBigInt64(8, 2n ** 53n, true);
    view.setBigInt64(16, 2n ** 63n - 1n, true);
    const t = tensorFromProto(emptyTensor({ dims: [3], data_type: OnnxElementType.INT64, raw_data: raw }));
    expect(Array.from(t.data as Float64Array)).toEqual([-5, 2 ** 53, 2 ** 63]);
    const written = tensorToProto('t', t).raw_data!;
    expect(new DataView(written.buffer).getBigInt64(16, true)).toBe(2n ** 63n - 1n);
  });

  it('reads the typed fields, strings and 16-bit floats', () => {
    expect(Array.from(tensorFromProto(emptyTensor({ dims: [2], data_type: OnnxElementType.INT64, int64_data: [7, -8] })).data as Float64Array)).toEqual([7, -8]);
    expect(
      tensorFromProto(
        emptyTensor({
          dims: [2],
          data_type: OnnxElementType.STRING,
          string_data: [new TextEncoder().encode('a'), new TextEncoder().encode('bé')],
        }),
      ).data,
    ).toEqual(['a', 'bé']);
    const half = tensorFromProto(emptyTensor({ dims: [2], data_type: OnnxElementType.FLOAT16, int32_data: [0x3c00, 0xc000] }));
    expect(Array.from(half.data as Float32Array)).toEqual([1, -2]);
    const decoded = decodeTensorProto(encodeTensorProto(tensorToProto('b', { elementType: OnnxElementType.BOOL, shape: [3], data: Uint8Array.from([1, 0, 1]) })));
    expect(Array.from(tensorFromProto(decoded).data as Uint8Array)).toEqual([1, 0, 1]);
  });

  it('rounds to half precision and bfloat16 to nearest even', () => {
    for (const v of [0, 1, -2.5, 65504, 6.1e-5, 5.96e-8, 0.1]) expect(Math.abs(halfBitsToFloat(floatToHalfBits(v)) - v)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -11);
    expect(floatToHalfBits(1 + 2 ** -11)).toBe(0x3c00);
    expect(floatToHalfBits(70000)).toBe(0x7c00);
    expect(bfloat16BitsToFloat(floatToBfloat16Bits(0.478515625))).toBe(0.478515625);
    expect(bfloat16BitsToFloat(floatToBfloat16Bits(1 + 2 ** -8))).toBe(1);
  });

  it('says which tensor has the wrong amount of data', () => {
    expect(() => tensorFromProto(emptyTensor({ name: 'w', dims: [2, 2], data_type: OnnxElementType.FLOAT, float_data: [1, 2, 3] }))).toThrow(
      "tensor 'w' has 3 values for shape [2, 2]",
    );
    expect(() => tensorFromProto(emptyTensor({ name: 'c', dims: [1], data_type: OnnxElementType.COMPLEX64, float_data: [1, 2] }))).toThrow(
      /element type COMPLEX64, which poptfjs does not support/,
    );
  });
});
