import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { onnx, popart } from 'poptfjs';
import { checkWithOnnx, onnxCheckerAvailable } from './onnx_checker.js';
import { expectAllClose } from './session_models.js';

const { Builder } = popart;

function attributes(model: Uint8Array, output: string): Record<string, unknown> {
  const node = onnx.modelFromBytes(model).proto.graph!.node.find((n) => n.output.includes(output))!;
  return Object.fromEntries(node.attribute.map((a) => [a.name, a.i ?? a.f ?? a.ints ?? a.floats]));
}

/** Runs a model once on the host and returns its outputs. */
function runModel(model: Uint8Array, inputs: Record<string, tf.Tensor>, outputs?: string[]): Map<string, tf.Tensor> {
  const imported = onnx.importModel(onnx.modelFromBytes(model), outputs ? { outputs } : {});
  try {
    return onnx.runImportedModel(imported, inputs);
  } finally {
    imported.dispose();
  }
}

describe('Builder', () => {
  it('builds a model of ONNX operators that imports and computes what tfjs computes', () => {
    const builder = new Builder();
    const x = builder.addInputTensor('FLOAT', [2, 4]);
    const w = builder.addInitializedInputTensor(
      tf.tensor([
        [1, 0],
        [0, 1],
        [1, 1],
        [-1, 2],
      ]),
      'w',
    );
    const y = builder.aiOnnx.gemm([x, w], { alpha: 1, beta: 1 });
    const z = builder.aiOnnx.leakyrelu([y], { alpha: 0.1 });
    const [a, b] = builder.aiOnnx.split([z], 2, { axis: 1 });
    const out = builder.aiOnnx.concat([b!, a!], { axis: 1 });
    builder.addOutputTensor(out);
    expect(builder.getInputTensorIds()).toEqual([x]);
    expect(builder.getOutputTensorIds()).toEqual([out]);
    expect(builder.getTensorShape(out)).toEqual([2, 2]);
    expect(builder.getTensorDtypeString(out)).toBe('FLOAT');
    const model = builder.getModelProto();
    expect(attributes(model, z)).toEqual({ alpha: Math.fround(0.1) });
    const input = tf.tensor([
      [1, -2, 3, 0.5],
      [0, 1, -1, 2],
    ]);
    const result = runModel(model, { [x]: input }).get(out)!;
    const expected = tf.tidy(() => {
      const yy = tf.leakyRelu(
        tf.matMul(
          input,
          tf.tensor([
            [1, 0],
            [0, 1],
            [1, 1],
            [-1, 2],
          ]),
        ),
        0.1,
      );
      const [ya, yb] = tf.split(yy, 2, 1);
      return tf.concat([yb!, ya!], 1);
    });
    expectAllClose(result.dataSync(), expected.dataSync());
  });

  it('writes placement attributes for the nodes built in a scope, and on existing nodes', () => {
    const builder = new Builder();
    const x = builder.addInputTensor('FLOAT', [1, 2]);
    const [h, y] = builder.virtualGraph(1, () =>
      builder.pipelineStage(2, () => {
        const inner = builder.aiOnnx.relu([x]);
        return [inner, builder.executionPhase(3, () => builder.aiOnnx.sigmoid([inner]))] as const;
      }),
    );
    const after = builder.aiOnnx.neg([y]);
    builder.virtualGraph(after, 0);
    builder.pipelineStage([after], 4);
    const model = builder.getModelProto();
    expect(attributes(model, h)).toEqual({ __ipu_number: 1, __pipeline_stage: 2 });
    expect(attributes(model, y)).toEqual({ __ipu_number: 1, __pipeline_stage: 2, __execution_phase: 3 });
    expect(attributes(model, after)).toEqual({ __ipu_number: 0, __pipeline_stage: 4 });
    expect(() => builder.virtualGraph(x, 1)).toThrow(/no node makes 'input'/);
    expect(() => builder.virtualGraph(-1, () => 0)).toThrow(/expected a non-negative integer/);
  });

  it('edits a model read from a file or bytes, leaving the given ModelProto as it was', () => {
    const base = new Builder();
    const x = base.addInputTensor('FLOAT', [3]);
    base.addOutputTensor(base.aiOnnx.exp([x]));
    const bytes = base.getModelProto();
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-builder-'));
    writeFileSync(join(dir, 'model.onnx'), bytes);
    const proto = onnx.modelFromBytes(bytes).proto;
    const edited = new Builder(proto);
    const y = edited.aiOnnx.add(['Exp:0', 'Exp:0']);
    expect(proto.graph!.node).toHaveLength(1);
    expect(new Builder(join(dir, 'model.onnx')).getOutputTensorIds()).toEqual(['Exp:0']);
    const out = runModel(edited.getModelProto(), { [x]: tf.tensor([0, 1, 2]) }, [y]).get(y)!;
    expectAllClose(out.dataSync(), [2, 2 * Math.E, 2 * Math.exp(2)]);
  });

  it('computes the aiGraphcore losses as their definitions say', () => {
    const builder = new Builder();
    const p = builder.addInputTensor('FLOAT', [3, 2]);
    const labels = builder.addInputTensor('INT32', [3]);
    const nll = builder.aiGraphcore.nllloss([p, labels]);
    const nllSum = builder.aiGraphcore.nllloss([p, labels], { reduction: popart.ReductionType.Sum, ignoreIndex: 1 });
    const nllLog = builder.aiGraphcore.nllloss([p, labels], { inputIsLogProbability: true, reduction: popart.ReductionType.NoReduction });
    const l1 = builder.aiGraphcore.l1loss([p], 0.5);
    const identity = builder.aiGraphcore.identityloss([p], { reduction: popart.ReductionType.Sum });
    const probs = [0.2, 0.8, 0.6, 0.4, 0.5, 0.5];
    const outputs = runModel(builder.getModelProto(), { [p]: tf.tensor(probs, [3, 2]), [labels]: tf.tensor([1, 0, 1], [3], 'int32') }, [nll, nllSum, nllLog, l1, identity]);
    const picked = [0.8, 0.6, 0.5];
    expectAllClose(outputs.get(nll)!.dataSync(), [-(Math.log(0.8) + Math.log(0.6) + Math.log(0.5)) / 3]);
    expectAllClose(outputs.get(nllSum)!.dataSync(), [-Math.log(0.6)]);
    expectAllClose(
      outputs.get(nllLog)!.dataSync(),
      picked.map((v) => -v),
    );
    expectAllClose(outputs.get(l1)!.dataSync(), [(0.5 * probs.reduce((a, c) => a + c, 0)) / 6]);
    expectAllClose(outputs.get(identity)!.dataSync(), [3]);
  });

  it('says what is wrong with an operator, a tensor or a value', () => {
    const builder = new Builder();
    const x = builder.addInputTensor('FLOAT', [2]);
    expect(() => builder.aiOnnx.notAnOperator!([x])).toThrow(/builder.aiOnnx has no operator 'notAnOperator'; it has abs, acos/);
    expect(() => builder.aiOnnx.add([x, 'ghost'])).toThrow(/aiOnnx.add: no tensor\(s\) 'ghost' in the model/);
    expect(() => builder.addInputTensor('FLOATY', [1])).toThrow(/addInputTensor: dtype: "FLOATY" is invalid: .*expected one of .*"FLOAT"/);
    expect(() => builder.addInitializedInputTensor({ data: new Float32Array(3), shape: [2, 2] })).toThrow(/3 values do not fill the shape \[2, 2\]/);
    expect(() => builder.aiGraphcore.nllloss([x, x], { reduction: 'Average' as never })).toThrow(/aiGraphcore.nllloss: reduction = "Average" is invalid/);
  });

  it.skipIf(!onnxCheckerAvailable)("writes models the ONNX checker accepts, PopART's losses included", () => {
    const builder = new Builder();
    const x = builder.addInputTensor('FLOAT', [4, 3]);
    const labels = builder.addInputTensor('INT32', [4]);
    const w = builder.addInitializedInputTensor({ data: new Float32Array(6).fill(0.1), shape: [3, 2] });
    const probs = builder.virtualGraph(0, () => builder.aiOnnx.softmax([builder.aiOnnx.matmul([x, w])], { axis: 1 }));
    builder.addOutputTensor(builder.aiGraphcore.nllloss([probs, labels]));
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-builder-')), 'model.onnx');
    writeFileSync(file, builder.getModelProto());
    const checked = checkWithOnnx(file);
    expect(checked.stderr).toBe('');
    expect(checked.status).toBe(0);
  });
});
