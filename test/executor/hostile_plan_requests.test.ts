/**
 * `plan()` on requests a careless or hostile caller makes: each is refused
 * with a poptfjs error naming the argument and what it takes, before the
 * model is built.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { plan, PoptfjsError } from 'poptfjs';

let built = 0;
function model(): tf.LayersModel {
  built++;
  return tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [4] })] });
}

const inputs = [{ shape: [8, 4] }];
const target = { shape: [8, 2] };

async function refusal(request: Record<string, unknown>): Promise<string> {
  const before = built;
  const error = await plan(model, request as never).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PoptfjsError);
  expect(built).toBe(before);
  return (error as Error).message;
}

describe('plan() on hostile requests', () => {
  it("refuses optimizer names that are Object.prototype's keys, numbers and objects as it refuses any unknown name", async () => {
    const expected = 'expected one of sgd, adam, adamw, rmsprop, lamb or a function of the model';
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'nonexistent']) {
      expect(await refusal({ inputs, target, loss: 'meanSquaredError', optimizer: name })).toBe(`plan: unknown optimizer '${name}'; ${expected}`);
    }
    expect(await refusal({ inputs, target, loss: 'meanSquaredError', optimizer: 42 })).toBe(`plan: unknown optimizer 42; ${expected}`);
    expect(await refusal({ inputs, target, loss: 'meanSquaredError', optimizer: { lr: 1 } })).toBe(`plan: unknown optimizer {"lr":1}; ${expected}`);
  });

  it('refuses input and target dtypes a plan cannot take, complex64 among them, naming the argument', async () => {
    for (const dtype of ['float64', 'uint8', 'string', '', 'Float32', 'complex64']) {
      expect(await refusal({ inputs: [{ shape: [8, 4], dtype }] })).toBe(`plan: inputs[0].dtype must be one of float32, float16, int32, bool, got '${dtype}'`);
      expect(await refusal({ inputs, target: { shape: [8, 2], dtype }, loss: 'meanSquaredError' })).toBe(
        `plan: target.dtype must be one of float32, float16, int32, bool, got '${dtype}'`,
      );
    }
  });

  it('refuses a loss that is neither a loss name nor a function, and dimensions beyond what tfjs indexes', async () => {
    const losses = 'expected one of meanSquaredError, meanAbsoluteError,';
    expect(await refusal({ inputs, target, loss: 42 })).toContain(`plan: unknown loss 42; ${losses}`);
    expect(await refusal({ inputs, target, loss: 'constructor' })).toContain(`plan: unknown loss 'constructor'; ${losses}`);
    expect(await refusal({ inputs: [{ shape: [8, 1e300] }] })).toBe('plan: inputs[0] has a dimension of 1e+300; a dimension has at most 2147483647 elements');
  });
});
