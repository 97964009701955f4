import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { load, Options, tf, trainingModel, type PoplarExecutor } from 'poptfjs';
import { linearModel, sample } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-save-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function losses(executor: PoplarExecutor, n: number, x: tf.Tensor, y: tf.Tensor): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const [output, loss] = (await executor(x, y)) as [tf.Tensor, tf.Tensor];
    out.push(loss.dataSync()[0]!);
    tf.dispose([output, loss]);
  }
  return out;
}

describe('saveModel', () => {
  const [x, y] = sample();

  it("writes tfjs's model format through a file:// handler that works without tfjs-node; training continues from the loaded model", async () => {
    expect(tf.findBackendFactory('tensorflow')).toBeFalsy();
    const executor = trainingModel(linearModel(), { loss: 'meanSquaredError' });
    await losses(executor, 5, x, y);
    const target = join(dir, 'linear');
    await executor.saveModel(`file://${target}`);
    const files = readdirSync(target).sort();
    expect(files).toHaveLength(2);
    expect(files[0]).toBe('model.json');
    expect(files[1]).toMatch(/^weights\.[0-9a-f]{16}\.bin$/);

    const loaded = await tf.loadLayersModel(`file://${target}/model.json`);
    const expected = (executor.model as tf.LayersModel).predict(x) as tf.Tensor;
    expect(Array.from((loaded.predict(x) as tf.Tensor).dataSync())).toEqual(Array.from(expected.dataSync()));

    const continued = trainingModel(loaded, { loss: 'meanSquaredError' });
    expect(await losses(continued, 3, x, y)).toEqual(await losses(executor, 3, x, y));
    continued.destroy();

    // Saving again replaces the model and its weights; the old weights file goes.
    await executor.saveModel(`file://${target}`);
    expect(readdirSync(target)).toHaveLength(2);
    executor.destroy();
  });

  it('refuses corrupted or truncated weights and model files, naming the file', async () => {
    const executor = trainingModel(linearModel(1), { loss: 'meanSquaredError' });
    const target = join(dir, 'corrupt');
    await executor.saveModel(`file://${target}`);
    executor.destroy();
    const weightsFile = join(target, readdirSync(target).find((f) => f.endsWith('.bin'))!);
    const good = readFileSync(weightsFile);
    const flipped = Uint8Array.from(good);
    flipped[10] ^= 1;
    writeFileSync(weightsFile, flipped);
    await expect(tf.loadLayersModel(`file://${target}/model.json`)).rejects.toThrow(/weights\.[0-9a-f]{16}\.bin: the weights do not match the hash in their name/);
    writeFileSync(weightsFile, good);
    const json = readFileSync(join(target, 'model.json'), 'utf8');
    writeFileSync(join(target, 'model.json'), json.slice(0, json.length >> 1));
    await expect(tf.loadLayersModel(`file://${target}/model.json`)).rejects.toThrow(/model\.json: not valid JSON .*the model file is corrupted/);
  });

  it('saves the model load() rebuilt from an exported executable, which tf.loadLayersModel reads back', async () => {
    const path = join(dir, 'exported.poptfjs');
    const exporter = trainingModel(linearModel(2), { options: new Options().useOfflineIpuTarget(2), loss: 'meanSquaredError' });
    await exporter.compileAndExport(path, x, y);
    exporter.destroy();
    const restored = await load(path);
    await losses(restored, 2, x, y);
    const target = join(dir, 'restored');
    await restored.saveModel(`file://${target}`);
    const loaded = await tf.loadLayersModel(`file://${target}/model.json`);
    expect(loaded.layers.map((l) => l.getClassName())).toContain('ExecutableGraph');
    const expected = (restored.model as tf.LayersModel).predict(x) as tf.Tensor;
    expect(Array.from((loaded.predict(x) as tf.Tensor).dataSync())).toEqual(Array.from(expected.dataSync()));
    const continued = trainingModel(loaded, { loss: 'meanSquaredError' });
    expect(await losses(continued, 2, x, y)).toEqual(await losses(restored, 2, x, y));
    continued.destroy();
    restored.destroy();
  });

  it('refuses to save a function model, saying how to save its executable', async () => {
    const w = tf.variable(tf.ones([10, 10]), true, 'save_model_test_w');
    const executor = trainingModel((t: tf.Tensor) => tf.matMul(t, w), { loss: 'meanSquaredError' });
    await expect(executor.saveModel(`file://${join(dir, 'fn')}`)).rejects.toThrow(/the wrapped model is a function, which tfjs cannot save; .*compileAndExport/);
    executor.destroy();
  });
});
