import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../lib/backend/backend_selection.js';
import { runImportedModel } from '../../lib/onnx/imported_model_run.js';
import { importModel } from '../../lib/onnx/model_import.js';
import { OnnxElementType } from '../../lib/onnx/proto/onnx_element_type.js';
import { OnnxConstantInputError, OnnxUnsupportedError } from '../../lib/onnx/proto/onnx_errors.js';
import { expectClose, liveTensors } from '../helpers.js';
import { floats, int64s, model, node, tensorValue } from './onnx_test_models.js';

beforeAll(async () => {
  await initBackend();
});

/** Y = Relu(X · W + B), with an intermediate `XW`. */
function dense() {
  return model({
    nodes: [node('MatMul', ['X', 'W'], ['XW'], 'matmul'), node('Add', ['XW', 'B'], ['XWB'], 'bias'), node('Relu', ['XWB'], ['Y'], 'relu')],
    inputs: [tensorValue('X', ['batch', 3])],
    outputs: [tensorValue('Y', ['batch', 2])],
    initializers: { W: floats([3, 2], [1, -1, 2, 0.5, -3, 1]), B: floats([2], [0.5, -0.5]) },
  });
}

describe('importing an ONNX model into the IR', () => {
  it('makes graph inputs IR inputs and initializers parameters named after them, annotated by node', () => {
    const imported = importModel(dense(), { inputShapeInfo: { X: [4, 3] } });
    const { graph } = imported;
    expect(imported.inputNames).toEqual(['X']);
    expect(graph.values[graph.inputs[0]!]!.source).toMatchObject({ kind: 'input', name: 'X' });
    expect(graph.values[graph.inputs[0]!]!.shape).toEqual([4, 3]);
    const params = graph.values.filter((v) => v.source.kind === 'param').map((v) => v.source);
    expect(params).toEqual(
      expect.arrayContaining([
        { kind: 'param', name: 'W', trainable: true },
        { kind: 'param', name: 'B', trainable: true },
      ]),
    );
    expect([...imported.variables.keys()].sort()).toEqual(['B', 'W']);
    expect(new Set(graph.nodes.map((n) => n.annotations.layer))).toEqual(new Set(['matmul', 'bias', 'relu']));
    const x = tf.tensor2d([
      [1, 2, 3],
      [-1, 0, 1],
      [0, 0, 0],
      [3, 2, 1],
    ]);
    const y = runImportedModel(imported, { X: x }).get('Y')!;
    const expected = tf.relu(tf.add(tf.matMul(x, imported.variables.get('W')!), imported.variables.get('B')!));
    expectClose(y, expected);
    imported.dispose();
  });

  it('lists every unsupported operator with its nodes before anything runs', () => {
    const unsupported = model({
      nodes: [
        node('Frobnicate', ['X'], ['a'], 'first'),
        node('Relu', ['a'], ['b'], 'fine'),
        node('Wibble', ['b'], ['c'], 'second'),
        node('Frobnicate', ['c'], ['d'], 'third'),
        { ...node('Custom', ['d'], ['Y'], 'custom'), domain: 'com.example' },
      ],
      inputs: [tensorValue('X', [2])],
      outputs: [tensorValue('Y', [2])],
    });
    const before = liveTensors();
    let error: unknown;
    try {
      importModel(unsupported);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OnnxUnsupportedError);
    const message = (error as Error).message;
    expect(message).toContain("operator Frobnicate (opset 17) ('first', 'third')");
    expect(message).toContain("operator Wibble (opset 17) ('second')");
    expect(message).toContain("operator com.example.Custom ('custom')");
    expect(message).not.toContain('Relu');
    expect((error as OnnxUnsupportedError).unsupported).toHaveLength(4);
    expect(liveTensors()).toBe(before);
  });

  it('asks for inputShapeInfo when an input has unknown dimensions, naming the input', () => {
    expect(() => importModel(dense())).toThrow(/graph input\(s\) with unknown dimensions: 'X' \[batch, 3\]; give their shapes in inputShapeInfo/);
    expect(() => importModel(dense(), { inputShapeInfo: { Z: [1, 3] } })).toThrow(/'Z' that are not graph inputs; the graph inputs are 'X'/);
  });

  it('computes Reshape shapes from Shape, Gather, Concat and Constant at import, leaving no shape kernels', () => {
    const m = model({
      nodes: [
        node('Shape', ['X'], ['shape'], 'shape'),
        node('Constant', [], ['zero'], 'zero', { value: int64s([], [0]) }),
        node('Gather', ['shape', 'zero'], ['batch'], 'batch'),
        node('Unsqueeze', ['batch', 'axes'], ['batch1'], 'unsqueeze'),
        node('Constant', [], ['rest'], 'rest', { value: int64s([1], [-1]) }),
        node('Concat', ['batch1', 'rest'], ['target'], 'target', { axis: 0 }),
        node('Reshape', ['X', 'target'], ['Y'], 'flatten'),
      ],
      inputs: [tensorValue('X', [2, 3, 4])],
      outputs: [tensorValue('Y', [2, 12])],
      initializers: { axes: int64s([1], [0]) },
    });
    const imported = importModel(m);
    expect(imported.graph.nodes.map((n) => n.kernel)).toEqual(['Reshape']);
    expect(imported.graph.values.filter((v) => v.source.kind === 'param')).toHaveLength(0);
    const x = tf.randomNormal([2, 3, 4]);
    expectClose(runImportedModel(imported, { X: x }).get('Y')!, tf.reshape(x, [2, 12]));
    imported.dispose();
  });

  it('names the node and the graph input when a value needed at import comes from an input', () => {
    const m = model({
      nodes: [node('Reshape', ['X', 'shape'], ['Y'], 'reshape_it')],
      inputs: [tensorValue('X', [2, 3]), tensorValue('shape', [2], OnnxElementType.INT64)],
      outputs: [tensorValue('Y', [3, 2])],
    });
    let error: unknown;
    try {
      importModel(m);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OnnxConstantInputError);
    expect((error as OnnxConstantInputError).inputName).toBe('shape');
    expect((error as Error).message).toMatch(
      /node 'reshape_it' \(Reshape\): input 1 'shape' must be known when the model is imported, but it is graph input 'shape'; give that input's value in constantInputs/,
    );
    const imported = importModel(m, { constantInputs: { shape: int64s([2], [3, 2]) } });
    expect(imported.inputNames).toEqual(['X']);
    expect(
      runImportedModel(imported, {
        X: tf.tensor2d([
          [1, 2, 3],
          [4, 5, 6],
        ]),
      }).get('Y')!.shape,
    ).toEqual([3, 2]);
    imported.dispose();
  });

  it('returns extra outputs, intermediate values included, and maps ONNX names to IR values', () => {
    const imported = importModel(dense(), { inputShapeInfo: { X: [1, 3] }, extraOutputs: ['XW'] });
    expect(imported.outputNames).toEqual(['Y', 'XW']);
    const { graph, tensorValues } = imported;
    expect(graph.roles.outputs).toEqual([tensorValues.get('Y'), tensorValues.get('XW')]);
    expect(graph.values[tensorValues.get('X')!]!.source).toMatchObject({ kind: 'input', name: 'X' });
    expect(graph.values[tensorValues.get('W')!]!.source).toMatchObject({ kind: 'param', name: 'W' });
    expect(graph.values[tensorValues.get('XWB')!]!.shape).toEqual([1, 2]);
    expect(imported.tensorInfo.get('XWB')).toEqual({ shape: [1, 2], dtype: 'float32', elementType: OnnxElementType.FLOAT });
    const outputs = runImportedModel(imported, { X: tf.tensor2d([[1, 1, 1]]) });
    expect(Array.from(outputs.get('XW')!.dataSync())).toEqual([0, 0.5]);
    imported.dispose();
    expect(() => importModel(dense(), { inputShapeInfo: { X: [1, 3] }, extraOutputs: ['nope'] })).toThrow("no tensor(s) named 'nope'");
  });

  it('gives a second import of the same model its own parameter names', () => {
    const first = importModel(dense(), { inputShapeInfo: { X: [1, 3] } });
    const second = importModel(dense(), { inputShapeInfo: { X: [1, 3] } });
    expect(second.parameterNames.get('W')).toBe('W:1');
    expect(second.variables.has('W:1')).toBe(true);
    first.dispose();
    second.dispose();
    const third = importModel(dense(), { inputShapeInfo: { X: [1, 3] } });
    expect(third.parameterNames.get('W')).toBe('W');
    third.dispose();
  });

  it('leaves no tensors behind but its variables, which dispose frees', () => {
    const before = liveTensors();
    const imported = importModel(dense(), { inputShapeInfo: { X: [2, 3] } });
    expect(liveTensors()).toBe(before + 2);
    imported.dispose();
    expect(liveTensors()).toBe(before);
  });

  it('runs repeatedly without leaking tensors', () => {
    const imported = importModel(dense(), { inputShapeInfo: { X: [2, 3] } });
    const x = tf.ones([2, 3]);
    const before = liveTensors();
    for (let i = 0; i < 10; i++) tf.dispose([...runImportedModel(imported, { X: x }).values()]);
    expect(liveTensors()).toBe(before);
    imported.dispose();
  });

  it('refuses int64 values that do not fit in int32 when they reach a tensor', () => {
    const m = model({
      nodes: [node('Add', ['X', 'big'], ['Y'], 'add')],
      inputs: [tensorValue('X', [1], OnnxElementType.INT64)],
      outputs: [tensorValue('Y', [1], OnnxElementType.INT64)],
      initializers: { big: int64s([1], [2 ** 40]) },
    });
    expect(() => importModel(m)).toThrow(/initializer 'big': INT64 value 1099511627776 at flat index 0 does not fit in int32/);
  });

  it('aligns the second input at `axis` for legacy broadcasting before opset 7', () => {
    const m = model({
      nodes: [node('Add', ['A', 'B'], ['Y'], 'add', { broadcast: 1, axis: 1 })],
      inputs: [tensorValue('A', [2, 3, 2])],
      outputs: [tensorValue('Y', [2, 3, 2])],
      initializers: { B: floats([3], [10, 20, 30]) },
      opset: 6,
    });
    const imported = importModel(m);
    const y = runImportedModel(imported, { A: tf.zeros([2, 3, 2]) }).get('Y')!;
    expect(Array.from(y.dataSync()).slice(0, 6)).toEqual([10, 10, 20, 20, 30, 30]);
    imported.dispose();
  });
});
