import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { DeviceManager, Engine, Executable, Options, inferenceModel } from 'poptfjs';
import { regressor } from './engine_fixtures.js';

/** The inference executable of `regressor(seed)` exported with `options` for host batches of `batch`, and the model to check it against. */
async function exportedInference(seed: number, options: Options, batch: number): Promise<{ path: string; model: tf.Sequential }> {
  const model = regressor(seed);
  const executor = inferenceModel(model, { options });
  const path = join(mkdtempSync(join(tmpdir(), 'poptfjs-streams-')), 'inference.poptfjs');
  await executor.compileAndExport(path, tf.zeros([batch, 5]));
  executor.destroy();
  return { path, model };
}

/** The model's output for each row of `rows` (5 values each), as one array. */
function predicted(model: tf.Sequential, rows: readonly number[][]): number[] {
  return [...(model.predict(tf.tensor2d(rows as number[][])) as tf.Tensor).dataSync()];
}

function expectClose(actual: ArrayLike<number>, expected: readonly number[]): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => expect(actual[i]).toBeCloseTo(e, 5));
}

const ROWS = [0, 1, 2].map((r) => [0, 1, 2, 3, 4].map((c) => (r + 1) * 0.1 * (c - 2)));

describe('Engine: streams', () => {
  it("moves each transfer through the next slot of a circular buffer, across runs; a buffer of one transfer is Poplar's fixed location", async () => {
    // Two device iterations of one sample: two transfers of each stream per run.
    const { path, model } = await exportedInference(60, new Options().deviceIterations(2), 2);
    const engine = new Engine(Executable.fromFile(path));
    engine.load(new DeviceManager().createIpuModelDevice());
    engine.run(engine.programIndex('weightsFromHost'));
    const step = engine.programIndex('step');

    // Three transfers of input, two of output: run 1 reads rows 0, 1; run 2 rows 2, 0 (wrapped); run 3 rows 1, 2.
    engine.connectStream('input0', Float32Array.from(ROWS.flat()));
    const output = new Float32Array(6);
    engine.connectStream('output0', output);
    for (const rows of [
      [0, 1],
      [2, 0],
      [1, 2],
    ]) {
      engine.run(step);
      expectClose(
        output,
        predicted(
          model,
          rows.map((r) => ROWS[r]!),
        ),
      );
    }
    // A buffer of one transfer: every transfer reads (and writes) the same place.
    engine.connectStream('input0', Float32Array.from(ROWS[2]!));
    const collected: number[] = [];
    engine.connectStreamToCallback('output0', (buffer) => collected.push(...buffer));
    engine.run(step);
    expectClose(collected, predicted(model, [ROWS[2]!, ROWS[2]!]));
    const fixed = new Float32Array(3);
    engine.connectStream('output0', fixed);
    engine.run(step);
    expectClose(fixed, predicted(model, [ROWS[2]!]));
  });

  it("calls the callback connected for a replica index with that replica's transfers, the one for all with the others", async () => {
    // Two replicas of one sample each: the host batch's first sample goes to replica 0, the second to replica 1.
    const { path, model } = await exportedInference(61, new Options().replicationFactor(2), 2);
    const engine = new Engine(Executable.fromFile(path));
    engine.load(new DeviceManager().createIpuModelDevice({ numIpus: 2 }));
    engine.run(engine.programIndex('weightsFromHost'));
    engine.connectStreamToCallback('input0', 0, (buffer) => buffer.set(ROWS[0]!));
    engine.connectStreamToCallback('input0', 1, (buffer) => buffer.set(ROWS[1]!));
    const byReplica: number[][] = [[], []];
    engine.connectStreamToCallback('output0', 1, (buffer) => byReplica[1]!.push(...buffer));
    engine.connectStreamToCallback('output0', (buffer) => byReplica[0]!.push(...buffer));
    engine.run(engine.programIndex('step'));
    expectClose(byReplica[0]!, predicted(model, [ROWS[0]!]));
    expectClose(byReplica[1]!, predicted(model, [ROWS[1]!]));

    const only = new Engine(Executable.fromFile(path));
    only.load(new DeviceManager().createIpuModelDevice({ numIpus: 2 }));
    only.run(only.programIndex('weightsFromHost'));
    only.connectStreamToCallback('input0', 0, (buffer) => buffer.set(ROWS[0]!));
    only.connectStream('output0', new Float32Array(6));
    expect(() => only.run(only.programIndex('step'))).toThrow("stream 'input0' has no callback for replica 1 (connected: 0)");
    expect(() => only.connectStreamToCallback('input0', -1, () => {})).toThrow("connectStreamToCallback('input0'): the replica index is -1; expected a non-negative integer");
  });
});
