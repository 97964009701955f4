import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { popart } from 'poptfjs';

const { AnchorReturnType, DataFlow, DeviceManager, InferenceSession, StepIO } = popart;

const FIXTURES = fileURLToPath(new URL('../fixtures/session/', import.meta.url));
/** Inputs and numpy float16 outputs of the fixture models (make_float16_graphs.py). */
const REFERENCES = JSON.parse(readFileSync(`${FIXTURES}float16_references.json`, 'utf8')) as {
  matmul: { a: number[]; y: number[]; yFloat32: number[] };
  mixedCast: { x: number[]; x16: number[]; s16: number[]; out: number[] };
};

/** `y = x + c` (or `x · c`), x an input of `size` elements and c an initializer, both of element type `dtype`. */
function addModel(dtype: 'FLOAT16' | 'FLOAT', size: number, c: readonly number[], op: 'add' | 'mul' = 'add') {
  const builder = new popart.Builder();
  const input = builder.addInputTensor(dtype, [size], 'x');
  const constant = builder.addInitializedInputTensor({ data: Float32Array.from(c), shape: [c.length], dtype }, 'c');
  const y = builder.aiOnnx[op]([input, constant], {}, 'y');
  builder.addOutputTensor(y);
  return { model: builder.getModelProto(), x: input, c: constant, y };
}

/** Runs `model` once on `inputs` (by name) and returns the anchors `anchors` (by name). */
async function runOnce(
  model: popart.ModelSource,
  inputs: Record<string, Float32Array>,
  anchors: readonly string[],
  options?: Partial<popart.SessionOptions>,
): Promise<Record<string, Float32Array>> {
  const session = await InferenceSession.create({
    model,
    dataFlow: new DataFlow(1, Object.fromEntries(anchors.map((name) => [name, AnchorReturnType('All')]))),
    deviceInfo: new DeviceManager().createCpuDevice(),
    ...(options ? { userOptions: options } : {}),
  });
  try {
    await session.prepareDevice();
    const arrays = session.initAnchorArrays();
    session.run(new StepIO(inputs, arrays));
    return arrays as Record<string, Float32Array>;
  } finally {
    session.dispose();
  }
}

describe('FLOAT16 graphs in sessions compute in float16', () => {
  it('rounds inputs and every result to float16: 1024 + 0.3 is 1024, and 2049 enters as 2048', async () => {
    // float16 values are 1 apart at 1024 and 2 apart at 2048; 0.3 is held as 0.30004883 (the nearest float16).
    const half = addModel('FLOAT16', 3, [0.3, 0.3, 0.3]);
    const y = (await runOnce(half.model, { [half.x]: Float32Array.from([1024, 1, 2049]) }, [half.y]))[half.y]!;
    expect([...y]).toEqual([1024, 1.2998046875, 2048]);
    const float = addModel('FLOAT', 3, [0.3, 0.3, 0.3]);
    const y32 = (await runOnce(float.model, { [float.x]: Float32Array.from([1024, 1, 2049]) }, [float.y]))[float.y]!;
    expect([...y32]).toEqual([...Float32Array.from([1024.3, 1.3, 2049.3])]);
  });

  it('computes a MatMul as numpy does in float16 (float32 sums, one rounding), not as in float32', async () => {
    const { a, y, yFloat32 } = REFERENCES.matmul;
    const out = (await runOnce(`${FIXTURES}float16_matmul.onnx`, { a: Float32Array.from(a) }, ['y'])).y!;
    expect([...out]).toEqual(y);
    expect([...out]).not.toEqual([...Float32Array.from(yFloat32)]);
  });

  it('overflows to ±Infinity beyond ±65504 and keeps 65504 when the sum rounds down to it', async () => {
    const m = addModel('FLOAT16', 4, [10000, -10000, 8, 32]);
    const y = (await runOnce(m.model, { [m.x]: Float32Array.from([60000, -60000, 65504, 65504]) }, [m.y]))[m.y]!;
    expect([...y]).toEqual([Infinity, -Infinity, 65504, Infinity]);
  });

  it('keeps subnormal results down to 2^-24 and rounds smaller ones to it or to zero', async () => {
    const m = addModel('FLOAT16', 3, [1.5 * 2 ** -13, 2 ** -14, 2 ** -3], 'mul');
    const y = (await runOnce(m.model, { [m.x]: Float32Array.from([2 ** -12, 2 ** -12, 2 ** -20]) }, [m.y]))[m.y]!;
    // 0.75 · 2^-24 rounds up to 2^-24, 0.25 · 2^-24 down to 0; 2^-23 is a float16 subnormal.
    expect([...y]).toEqual([2 ** -24, 0, 2 ** -23]);
  });

  it('computes the FLOAT16 part of a mixed graph in float16 and the FLOAT part in float32, through Cast both ways', async () => {
    const { x, x16, s16, out } = REFERENCES.mixedCast;
    const arrays = await runOnce(`${FIXTURES}float16_mixed_cast.onnx`, { x: Float32Array.from(x) }, ['x16', 's16', 'out']);
    expect([...arrays.x16!]).toEqual(x16);
    expect([...arrays.s16!]).toEqual(s16);
    expect([...arrays.out!]).toEqual(out);
  });

  it('rounds FLOAT16 weights written with writeWeights to float16', async () => {
    const m = addModel('FLOAT16', 1, [0]);
    const session = await InferenceSession.create({
      model: m.model,
      dataFlow: new DataFlow(1, { [m.y]: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    await session.prepareDevice();
    session.writeWeights({ [m.c]: Float32Array.from([0.1]) });
    const read = new Float32Array(1);
    session.readWeights({ [m.c]: read });
    expect(read[0]).toBe(0.0999755859375);
    session.weightsFromHost();
    const arrays = session.initAnchorArrays();
    session.run(new StepIO({ [m.x]: Float32Array.from([1000]) }, arrays));
    // 1000.0999755859375 rounds to 1000 (float16 values are 0.5 apart there).
    expect(arrays[m.y]![0]).toBe(1000);
    session.dispose();
  });
});

describe('stochastic rounding of FLOAT16 graphs', () => {
  const COUNT = 4096;
  const m = addModel('FLOAT16', COUNT, [0.3]);
  const ones = Float32Array.from({ length: COUNT }, () => 1024);
  const sums = (options: Partial<popart.SessionOptions>) => runOnce(m.model, { [m.x]: ones }, [m.y], options).then((arrays) => arrays[m.y]!);
  const stochastic = (seed: string) => ({ enableStochasticRounding: true, engineOptions: { 'prng.seed': seed } });

  it('rounds to nearest even without it', async () => {
    expect(new Set(await sums({}))).toEqual(new Set([1024]));
  });

  it('rounds 1024 + 0.3 up to 1025 about 30% of the time, so the mean is near the exact sum', async () => {
    const y = await sums(stochastic('7'));
    expect(new Set(y)).toEqual(new Set([1024, 1025]));
    const mean = y.reduce((a, b) => a + b, 0) / COUNT;
    // The exact sum is 1024.30004883; the mean of 4096 draws has a standard deviation of 0.0072.
    expect(Math.abs(mean - 1024.30004883)).toBeLessThan(0.04);
  });

  it('draws the same roundings with the same prng.seed and others with another seed', async () => {
    const first = await sums(stochastic('7'));
    expect([...(await sums(stochastic('7')))]).toEqual([...first]);
    expect([...(await sums(stochastic('8')))]).not.toEqual([...first]);
  });

  it('is switched on by the engine option prng.enableStochasticRounding too', async () => {
    const y = await sums({ engineOptions: { 'prng.enableStochasticRounding': 'true', 'prng.seed': '7' } });
    expect(new Set(y)).toEqual(new Set([1024, 1025]));
    expect([...y]).toEqual([...(await sums(stochastic('7')))]);
  });
});

describe('FLOAT16 graphs through graph rewrites', () => {
  it('still rounds a Gemm with a transposed operand after TransposedMatMul (wasm) rewrites it as a Transpose and a MatMul', async () => {
    const { a, y } = REFERENCES.matmul;
    // b of the MatMul fixture ([[0.3, 7], [1.1, -0.2], [2048, 0.01]]), transposed.
    const bT = [0.3, 1.1, 2048, 7, -0.2, 0.01];
    const builder = new popart.Builder();
    const input = builder.addInputTensor('FLOAT16', [2, 3], 'a');
    const weight = builder.addInitializedInputTensor({ data: Float32Array.from(bT), shape: [2, 3], dtype: 'FLOAT16' }, 'bT');
    const out = builder.aiOnnx.gemm([input, weight], { transB: 1 }, 'y');
    builder.addOutputTensor(out);
    const session = await InferenceSession.create({
      model: builder.getModelProto(),
      dataFlow: new DataFlow(1, { [out]: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
      userOptions: { reportOptions: { showOptimizations: 'true' } },
    });
    await session.prepareDevice();
    const arrays = session.initAnchorArrays();
    session.run(new StepIO({ [input]: Float32Array.from(a) }, arrays));
    expect(session.getSummaryReport()).toContain('TransposedMatMul ×1');
    expect([...arrays[out]!]).toEqual(y);
    session.dispose();
  });
});
