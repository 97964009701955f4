/**
 * `ops.customOp`: an op whose kernels are JavaScript functions registered by
 * (name, domain), traced as `poptfjs.CustomOp` (and `poptfjs.CustomOpGrad`).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Options, inferenceModel, load, ops, optim, plan, trainingModel } from 'poptfjs';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { expectClose, smallIpuTarget } from '../helpers.js';

/** PopTorch's test op `Cube` (tests/custom_ops/custom_cube_op.cpp): outputs x³ + bias and x³; the gradient of x is 3x²·dy. */
const CUBE: ops.CustomOpDefinition = {
  name: 'Cube',
  domain: 'com.acme',
  forward: ([x, bias]) => {
    const cube = tf.mul(tf.mul(x!, x!), x!);
    return [tf.add(cube, bias!), cube];
  },
  gradient: ([dy0, dy1], [x]) => [tf.mul(tf.mul(3, tf.square(x!)), tf.add(dy0!, dy1!)), null],
};

/** PopTorch's `LeakyRelu` test op, with its `alpha` attribute. */
const LEAKY_RELU: ops.CustomOpDefinition = {
  name: 'LeakyRelu',
  domain: 'com.acme',
  forward: ([x], { alpha }) => tf.where(tf.greater(x!, 0), x!, tf.mul(x!, alpha as number)),
};

beforeEach(() => {
  ops.registerCustomOp(CUBE);
  ops.registerCustomOp(LEAKY_RELU);
});
afterEach(() => {
  ops.unregisterCustomOp('Cube', 'com.acme');
  ops.unregisterCustomOp('LeakyRelu', 'com.acme');
});

const cube = (x: tf.Tensor, bias: tf.Tensor) => ops.customOp([x, bias], 'Cube', 'com.acme', 1, [x, x]);

describe('ops.customOp', () => {
  it('runs the registered forward kernel, eagerly and on the device, as PopTorch runs its Cube test op', async () => {
    const x = tf.fill([1, 8], 2);
    const bias = tf.fill([1, 8], 4);
    const [eager0, eager1] = cube(x, bias);
    expectClose(eager0!, tf.fill([1, 8], 12));
    expectClose(eager1!, tf.fill([1, 8], 8));
    const executor = inferenceModel((a: tf.Tensor, b: tf.Tensor) => cube(a, b));
    const v = tf.tensor2d([
      [1, -2, 0.5],
      [3, 0, -1],
    ]);
    const b = tf.tensor2d([
      [0.5, 1, -1],
      [2, 0, 3],
    ]);
    const [out0, out1] = (await executor.run(v, b)) as tf.Tensor[];
    expectClose(out0!, tf.add(tf.pow(v, 3), b));
    expectClose(out1!, tf.pow(v, 3));
    expect(executor.executable.graph.nodes.map((n) => n.kernel)).toEqual(['poptfjs.CustomOp']);
    expect(executor.irText()).toMatch(/= poptfjs\.CustomOp\(%\d+, %\d+\) \{name="Cube", domain="com\.acme", domainVersion=1/);
  });

  it('trains through the op with its gradient kernel, as plain tfjs does with the same formula', async () => {
    const train = async (useCustomOp: boolean) => {
      const w = tf.variable(
        tf.tensor2d([
          [0.5, -0.25],
          [0.125, 0.75],
        ]),
        true,
      );
      const fn = (x: tf.Tensor, bias: tf.Tensor) => {
        const h = tf.matMul(x, w);
        const [y0, y1] = useCustomOp ? cube(h, bias) : [tf.add(tf.pow(h, 3), bias), tf.pow(h, 3)];
        return [y0!, ops.identityLoss(tf.add(tf.sum(tf.square(y0!)), tf.mul(tf.sum(y1!), 0.5)), 'sum')];
      };
      const executor = trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0.01 }) });
      const losses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const [, loss] = (await executor.run(
          tf.tensor2d([
            [1, 0.5],
            [-1, 2],
          ]),
          tf.tensor2d([
            [0.1, 0.2],
            [0.3, 0.4],
          ]),
        )) as tf.Tensor[];
        losses.push(loss!.dataSync()[0]!);
      }
      executor.copyWeightsToHost();
      if (useCustomOp) expect(executor.executable.graph.nodes.map((n) => n.kernel)).toContain('poptfjs.CustomOpGrad');
      return { w, losses };
    };
    const custom = await train(true);
    const plain = await train(false);
    expectClose(custom.w, plain.w, 1e-5, 1e-6);
    expectClose(tf.tensor1d(custom.losses), tf.tensor1d(plain.losses));
    expect(custom.losses[2]).not.toBeCloseTo(custom.losses[0]!, 3);
  });

  it('passes attributes through to the kernels: numbers, strings and arrays', async () => {
    const executor = inferenceModel((x: tf.Tensor) => ops.customOp([x], 'LeakyRelu', 'com.acme', 1, [x], { alpha: 0.02 })[0]!);
    expectClose((await executor.run(tf.tensor1d([-1, -0.5, 0, 0.5, 1]))) as tf.Tensor, tf.tensor1d([-0.02, -0.01, 0, 0.5, 1]));
    const seen: ops.CustomOpAttributes[] = [];
    ops.registerCustomOp({ name: 'ManyAttributeOp', domain: 'test.poptfjs', forward: ([x], attributes) => (seen.push(attributes), tf.clone(x!)) });
    try {
      // PopTorch's test_many_attributes_examples.
      const attributes = {
        float_one: 1.0,
        float_minus_two: -2.0,
        int_zero: 0,
        int_minus_five: -5,
        floats_one_two_three: [1.0, 2.0, 3.0],
        ints_minus_one_two_three: [-1, -2, -3],
        a_string: 'string with quotes and slash " \' \\ end',
        strs: ['abc', 'def', 'ghi'],
      };
      const many = inferenceModel((x: tf.Tensor) => ops.customOp([x], 'ManyAttributeOp', 'test.poptfjs', 1, [x], attributes)[0]!);
      await many.run(tf.ones([2]));
      expect(seen.at(-1)).toEqual(attributes);
    } finally {
      ops.unregisterCustomOp('ManyAttributeOp', 'test.poptfjs');
    }
  });

  it('travels with the executable: a loaded executable runs while the op is registered and names it when not', async () => {
    const fn = (x: tf.Tensor) => tf.relu(ops.customOp([x], 'LeakyRelu', 'com.acme', 3, [x], { alpha: 0.5 })[0]!);
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-custom-op-')), 'leaky.poptfjs');
    const x = tf.tensor1d([-2, 4]);
    await inferenceModel(fn).compileAndExport(file, x);
    const loaded = await load(file);
    expectClose((await loaded.run(x)) as tf.Tensor, tf.tensor1d([0, 4]));
    ops.unregisterCustomOp('LeakyRelu', 'com.acme');
    const again = await load(file);
    await expect(again.run(x)).rejects.toThrow(
      "customOp: custom op 'LeakyRelu' (domain 'com.acme') is not registered in this process; register its kernels first with ops.registerCustomOp({ name: 'LeakyRelu', domain: 'com.acme', forward, gradient })",
    );
  });

  it('is an error at trace when the op is unknown, when outputs differ from the examples, and when training needs a missing gradient', async () => {
    const x = tf.ones([2, 3]);
    const unknown = inferenceModel((v: tf.Tensor) => ops.customOp([v], 'Cubed', 'com.acme', 1, [v])[0]!);
    await expect(unknown.compile(x)).rejects.toThrow("customOp: custom op 'Cubed' (domain 'com.acme') is not registered in this process");
    const wrongShape = inferenceModel((v: tf.Tensor) => ops.customOp([v, v], 'Cube', 'com.acme', 1, [v, tf.zeros([3, 2])])[0]!);
    await expect(wrongShape.compile(x)).rejects.toThrow("custom op 'Cube' (domain 'com.acme'): output 1 is float32[2,3], but float32[3,2] is expected");
    const wrongDtype = () => ops.customOp([x, x], 'Cube', 'com.acme', 1, [x, tf.zeros([2, 3], 'int32')]);
    expect(wrongDtype).toThrow("custom op 'Cube' (domain 'com.acme'): output 1 is float32[2,3], but int32[2,3] is expected");
    expect(() => ops.customOp([x, x], 'Cube', 'com.acme', 1, [x])).toThrow("custom op 'Cube' (domain 'com.acme') returned 2 output(s) where 1 are expected");
    const w = tf.variable(tf.ones([3]), true);
    const training = trainingModel(
      (v: tf.Tensor) => {
        const y = ops.customOp([tf.mul(v, w)], 'LeakyRelu', 'com.acme', 1, [v], { alpha: 0.1 })[0]!;
        return [y, ops.identityLoss(tf.sum(y), 'sum')];
      },
      { optimizer: new optim.SGD([w], { lr: 0.1 }) },
    );
    await expect(training.compile(x)).rejects.toThrow(
      "custom op 'LeakyRelu' (domain 'com.acme') has no gradient, so a model cannot be trained through it: register it with a gradient(outputGradients, inputs, outputs, attributes) function",
    );
  });

  it('names the op and the output when a kernel, forward or gradient, returns a disposed tensor', async () => {
    const disposed = (shape: number[]) => {
      const t = tf.ones(shape);
      t.dispose();
      return t;
    };
    ops.registerCustomOp({
      name: 'Disposing',
      domain: 'test.poptfjs',
      forward: ([x]) => disposed(x!.shape),
      gradient: ([dy]) => [disposed(dy!.shape)],
    });
    ops.registerCustomOp({ name: 'DisposingGradient', domain: 'test.poptfjs', forward: ([x]) => tf.clone(x!), gradient: ([dy]) => [disposed(dy!.shape)] });
    try {
      const x = tf.ones([2, 3]);
      expect(() => ops.customOp([x], 'Disposing', 'test.poptfjs', 1, [x])).toThrow(
        "custom op 'Disposing' (domain 'test.poptfjs'): output 0 is a disposed tensor; a kernel returns tensors it keeps alive (not ones it disposed or made inside a tf.tidy)",
      );
      const w = tf.variable(tf.ones([3]), true);
      const training = trainingModel(
        (v: tf.Tensor) => {
          const y = ops.customOp([tf.mul(v, w)], 'DisposingGradient', 'test.poptfjs', 1, [v])[0]!;
          return [y, ops.identityLoss(tf.sum(y), 'sum')];
        },
        { optimizer: new optim.SGD([w], { lr: 0.1 }) },
      );
      await expect(training.run(x)).rejects.toThrow(
        "the gradient of custom op 'DisposingGradient' (domain 'test.poptfjs'): input gradient 0 is a disposed tensor; a kernel returns tensors it keeps alive",
      );
    } finally {
      ops.unregisterCustomOp('Disposing', 'test.poptfjs');
      ops.unregisterCustomOp('DisposingGradient', 'test.poptfjs');
    }
  });

  it('refuses bad arguments and attributes with messages that say what is expected', () => {
    const x = tf.ones([2]);
    expect(() => ops.customOp([x], '', 'com.acme', 1, [x])).toThrow('customOp: the name must be a non-empty string, got ""');
    expect(() => ops.customOp([x], 'Cube', 'com.acme', 1.5, [x])).toThrow('customOp: the domain version must be a non-negative integer, got 1.5');
    expect(() => ops.customOp([x], 'Cube', 'com.acme', 1, [])).toThrow(
      'customOp: exampleOutputs must be a non-empty array of tf.Tensors, one with the shape and dtype of each output',
    );
    expect(() => ops.customOp([x], 'LeakyRelu', 'com.acme', 1, [x], { alpha: true } as never)).toThrow(
      "customOp: attribute 'alpha' must be a number, a string, or an array of only numbers or only strings, got boolean",
    );
    expect(() => ops.customOp([x], 'LeakyRelu', 'com.acme', 1, [x], { mixed: [1, 'a'] } as never)).toThrow(
      "customOp: attribute 'mixed' must be a number, a string, or an array of only numbers or only strings, got an array of mixed types",
    );
    expect(() => ops.customOp([x], 'LeakyRelu', 'com.acme', 1, [x], { name: 'café' })).toThrow(`customOp: attribute 'name' "café" contains non-ASCII characters`);
    expect(() => ops.registerCustomOp({ name: 'Op', domain: 'd' } as never)).toThrow(
      "registerCustomOp: custom op 'Op' (domain 'd') needs a forward(inputs, attributes) function",
    );
  });

  it("refuses float attributes outside float32's range with PopTorch's message, and takes those inside it", async () => {
    // PopTorch's tests/custom_ops_attributes_test.py: test_float_attribute_too_low/_too_high and the list variants.
    const x = tf.tensor1d([3, 4, 5]);
    const call = (attributes: ops.CustomOpAttributes) => () => ops.customOp([x], 'LeakyRelu', 'com.acme', 1, [x], attributes);
    expect(call({ alpha: -Number.MAX_VALUE })).toThrow(/^customOp: -1\.79769e\+308 is too low for a float attribute \(a float32: at least -3\.4028234663852886e\+38\)$/);
    expect(call({ alpha: Number.MAX_VALUE })).toThrow(/^customOp: 1\.79769e\+308 is too high for a float attribute/);
    expect(call({ vec: [1, 2, -Number.MAX_VALUE] })).toThrow(/^customOp: -1\.79769e\+308 is too low for a float attribute/);
    expect(call({ vec: [Number.MAX_VALUE, 2, 3] })).toThrow(/^customOp: 1\.79769e\+308 is too high for a float attribute/);
    expect(call({ alpha: 3.5e38 })).toThrow(/^customOp: 3\.5e\+38 is too high for a float attribute/);
    expect(call({ alpha: -Infinity })).toThrow(/^customOp: -inf is too low for a float attribute/);
    // The largest float32, and a large safe integer (an int64 attribute), are taken.
    const executor = inferenceModel((t: tf.Tensor) => ops.customOp([t], 'LeakyRelu', 'com.acme', 1, [t], { alpha: 3.4028234663852886e38, count: 2 ** 53 - 1 })[0]!);
    expectClose((await executor.run(tf.tensor1d([-1, 2]))) as tf.Tensor, tf.tensor1d([-3.4028234663852886e38, 2]), 1e-6, 0);
    executor.destroy();
  });

  it('costs an element-wise pass over its outputs; its outputs take memory; it plans with shapes only', async () => {
    const executor = inferenceModel((a: tf.Tensor, b: tf.Tensor) => cube(a, b), { options: new Options().ipuTarget({ tiles: 4 }) });
    await executor.compile(tf.zeros([8, 16]), tf.zeros([16]));
    const graph = executor.executable.graph;
    const node = graph.nodes.find((n) => n.kernel === 'poptfjs.CustomOp')!;
    const target = smallIpuTarget({ tiles: 4, hostBytesPerCycle: 2 });
    // Two outputs of 8 × 16: 256 elements, 64 a tile at 3 cycles after a vertex's 170. Each input has fewer elements
    // than the outputs and is sent to the tiles: of x (128) a tile's 64 elements, of the bias all 16, 320 bytes at
    // 4 bytes a cycle (EXCHANGE_BYTES_PER_TILE_CYCLE); one sync of 90.
    expect(kernelCost(graph, node, target)).toEqual({ compute: 170 + 64 * 3, exchange: ((64 + 16) * 4) / 4, sync: 90, temporaryBytes: 0 });
    // At its peak, while the op runs: its inputs (512 + 64 bytes) and its two outputs of 512 bytes.
    expect(executor.executable.hardware.memory.ipus[0]!.peak).toMatchObject({ working: 512 + 64 + 2 * 512, temporary: 0, during: 'poptfjs.CustomOp in F0:0' });
    const result = await plan(() => (a: tf.Tensor) => ops.customOp([a], 'LeakyRelu', 'com.acme', 1, [tf.zeros([4, 8])], { alpha: 0.1 })[0]!, { inputs: [{ shape: [4, 8] }] });
    expect(result.fits).toBe(true);
  });
});
