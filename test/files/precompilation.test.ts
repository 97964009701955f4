import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { inferenceModel, load, optim, Options, PoptfjsError, tf, trainingModel, type PoplarExecutor } from 'poptfjs';
import { dropoutModel, linearModel, sample } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-precompile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function losses(executor: PoplarExecutor, steps: number, inputs: tf.Tensor[]): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < steps; i++) {
    const [output, loss] = (await executor(...inputs)) as [tf.Tensor, tf.Tensor];
    out.push(loss.dataSync()[0]!);
    tf.dispose([output, loss]);
  }
  return out;
}

function warnings(fn: () => Promise<unknown>): Promise<string> {
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  return fn().then(
    () => {
      const text = spy.mock.calls.map((c) => String(c[0])).join('');
      spy.mockRestore();
      return text;
    },
    (error: unknown) => {
      spy.mockRestore();
      throw error;
    },
  );
}

describe('compileAndExport and load', () => {
  it('compiles for an offline target without a device, and load() trains exactly as the original would', async () => {
    const [x, y] = sample();
    const path = join(dir, 'seed.poptfjs');
    const exporter = trainingModel(linearModel(), { options: new Options().useOfflineIpuTarget(2), loss: 'meanSquaredError' });
    await exporter.compileAndExport(path, x, y);
    expect(exporter.device.kind).toBe('OfflineIpu');
    await expect(exporter(x, y)).rejects.toThrow(/offline IPU target/);
    exporter.destroy();

    const loaded = await load(path);
    expect(loaded.compileCount).toBe(0);
    expect(loaded.training).toBe(true);
    expect(loaded.options.settings.connectionType).toBe('Always');
    expect(loaded.options.settings.offlineIpuVersion).toBeUndefined();
    const reference = trainingModel(linearModel(), { loss: 'meanSquaredError' });
    expect(await losses(loaded, 5, [x, y])).toEqual(await losses(reference, 5, [x, y]));
    loaded.copyWeightsToHost();
    reference.copyWeightsToHost();
    const model = loaded.model as tf.LayersModel;
    expect(Array.from((model.predict(x) as tf.Tensor).dataSync())).toEqual(Array.from(((reference.model as tf.LayersModel).predict(x) as tf.Tensor).dataSync()));
    loaded.destroy();
    reference.destroy();
  });

  it('exports the device state with the model: training resumes after load() bit for bit (momentum, dropout)', async () => {
    const x = tf.randomNormal([4, 8], 0, 1, 'float32', 7);
    const y = tf.randomNormal([4, 4], 0, 1, 'float32', 8);
    const model = dropoutModel();
    const options = new Options().randomSeed(42);
    const executor = trainingModel(model, { options, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.05, momentum: 0.9 }) });
    await losses(executor, 3, [x, y]);
    const path = join(dir, 'trained.poptfjs');
    await executor.compileAndExport(path, x, y);
    const loaded = await load(path);
    const resumed = await losses(loaded, 4, [x, y]);
    expect(resumed).toEqual(await losses(executor, 4, [x, y]));
    expect(loaded.getOptimizer()!.type).toBe('SGD');
    expect((loaded.getOptimizer() as optim.SGD).settings().groups[0]!.momentum).toBe(0.9);
    executor.destroy();
    loaded.destroy();
  });

  it('load() applies run-time options from editOpts and ignores others with a warning', async () => {
    const [x, y] = sample();
    const path = join(dir, 'edit.poptfjs');
    const exporter = trainingModel(linearModel(), { options: new Options().useOfflineIpuTarget(2), loss: 'meanSquaredError' });
    await exporter.compileAndExport(path, x, y);
    exporter.destroy();
    let loaded: PoplarExecutor | undefined;
    const log = await warnings(async () => {
      loaded = await load(path, { editOpts: (opts) => opts.modelName('renamed').deviceIterations(4).logDir(dir) });
    });
    expect(log).toMatch(/editOpts changed 'deviceIterations', which is fixed when the executable is compiled; .* ignored/);
    expect(loaded!.options.settings.modelName).toBe('renamed');
    expect(loaded!.options.settings.logDir).toBe(dir);
    expect(loaded!.options.settings.deviceIterations).toBe(1);
    expect(loaded!.executable.factors.deviceIterations).toBe(1);
    loaded!.destroy();
  });

  it('exports into model.poptfjs with a warning when the path is a directory, and that file loads', async () => {
    const [x] = sample();
    const folder = mkdtempSync(join(dir, 'folder-'));
    const exporter = inferenceModel(linearModel(), { options: new Options().useOfflineIpuTarget(2) });
    const log = await warnings(() => exporter.compileAndExport(folder, x));
    exporter.destroy();
    const file = join(folder, 'model.poptfjs');
    expect(log).toContain(`compileAndExport(${folder}): ${folder} is a directory, exporting the executable to ${file}`);
    expect(readdirSync(folder)).toEqual(['model.poptfjs']);
    const loaded = await load(file);
    const expected = (linearModel().predict(x) as tf.Tensor).dataSync();
    expect(Array.from(((await loaded(x)) as tf.Tensor).dataSync())).toEqual(Array.from(expected));
    loaded.destroy();
  });

  it('creates the missing folders of the path, and names the path when a folder cannot be made', async () => {
    const [x] = sample();
    const exporter = inferenceModel(linearModel(), { options: new Options().useOfflineIpuTarget(2) });
    const nested = join(dir, 'new', 'folders', 'nested.poptfjs');
    await exporter.compileAndExport(nested, x);
    expect(existsSync(nested)).toBe(true);
    const underFile = join(nested, 'inside.poptfjs');
    await expect(exporter.compileAndExport(underFile, x)).rejects.toThrow(`compileAndExport(${underFile}): cannot create the folder ${nested}: `);
    exporter.destroy();
  });

  it('load() rebuilds a model exported from an anonymous function', async () => {
    const w = tf.variable(
      tf.tensor2d([
        [1, -1],
        [2, 0.5],
      ]),
    );
    const exporter = inferenceModel((t: tf.Tensor) => tf.relu(tf.matMul(t, w)), { options: new Options().useOfflineIpuTarget(2) });
    const path = join(dir, 'anonymous.poptfjs');
    const x = tf.tensor2d([
      [1, 2],
      [3, -4],
    ]);
    await exporter.compileAndExport(path, x);
    exporter.destroy();
    w.dispose();
    const loaded = await load(path);
    expect(loaded.executable.modelName).toBe('anonymous function');
    // relu([1·1 + 2·2, 1·(-1) + 2·0.5]) = [5, 0]; relu([3 - 8, -3 - 2]) = [0, 0]
    expect(await ((await loaded(x)) as tf.Tensor).array()).toEqual([
      [5, 0],
      [0, 0],
    ]);
    loaded.destroy();
  });

  it('load() rebuilds a model whose name is not a valid tfjs layer name', async () => {
    const [x] = sample();
    const path = join(dir, 'spaces.poptfjs');
    const exporter = inferenceModel(linearModel(), { options: new Options().useOfflineIpuTarget(2).modelName('my model #1') });
    await exporter.compileAndExport(path, x);
    exporter.destroy();
    const loaded = await load(path);
    expect(loaded.executable.modelName).toBe('my model #1');
    expect((loaded.model as tf.LayersModel).name).toBe('my model #1');
    const expected = (linearModel().predict(x) as tf.Tensor).dataSync();
    expect(Array.from(((await loaded(x)) as tf.Tensor).dataSync())).toEqual(Array.from(expected));
    loaded.destroy();
  });

  it('load() refuses a file exported without its model, saying to use loadExecutable', async () => {
    const [x] = sample();
    const path = join(dir, 'bare.poptfjs');
    const exporter = inferenceModel(linearModel(), { options: new Options().useOfflineIpuTarget(2) });
    await exporter.compileAndExport(path, x, { exportModel: false });
    exporter.destroy();
    await expect(load(path)).rejects.toThrow(/exported with \{ exportModel: false \}, so it holds no model; .*loadExecutable/);
  });
});

describe('loadExecutable', () => {
  const [x, y] = sample();
  const path = join(dir, 'executable.poptfjs');

  it('attaches an exported executable to a fresh model (weights from the model) without compiling', async () => {
    const exporter = trainingModel(linearModel(), { options: new Options().useOfflineIpuTarget(2), loss: 'meanSquaredError' });
    await exporter.compileAndExport(path, x, y, { exportModel: false });
    exporter.destroy();
    const fresh = trainingModel(linearModel(), { loss: 'meanSquaredError' });
    await fresh.loadExecutable(path);
    expect(fresh.isCompiled()).toBe(true);
    expect(fresh.compileCount).toBe(0);
    const reference = trainingModel(linearModel(), { loss: 'meanSquaredError' });
    expect(await losses(fresh, 3, [x, y])).toEqual(await losses(reference, 3, [x, y]));
    fresh.destroy();
    reference.destroy();
  });

  it('refuses a model that differs, naming the first difference', async () => {
    const dense = (units: number, inputShape?: number[]) => tf.layers.dense({ units, ...(inputShape ? { inputShape } : {}) });
    const twoLayers = (hidden: number) => tf.sequential({ layers: [dense(hidden, [10]), dense(10)] });
    const exportBare = async (executor: PoplarExecutor, file: string, ...inputs: tf.Tensor[]) => {
      await executor.compileAndExport(file, ...inputs, { exportModel: false });
      executor.destroy();
    };
    const offline = () => new Options().useOfflineIpuTarget(2);
    const twoLayerFile = join(dir, 'two-layers.poptfjs');
    await exportBare(trainingModel(twoLayers(5), { options: offline(), loss: 'meanSquaredError' }), twoLayerFile, x, y);
    const inferenceFile = join(dir, 'inference.poptfjs');
    await exportBare(inferenceModel(linearModel(), { options: offline() }), inferenceFile, x);

    const cases: Array<[PoplarExecutor, string, RegExp]> = [
      [inferenceModel(linearModel()), path, /the file holds a training executable, but the model is wrapped for inference \(use trainingModel\)$/],
      [
        trainingModel(tf.sequential({ layers: [tf.layers.dense({ units: 10, inputShape: [10], useBias: false })] }), { loss: 'meanSquaredError' }),
        path,
        /the file has 2 parameter\(s\), the model 1$/,
      ],
      [
        trainingModel(twoLayers(7), { loss: 'meanSquaredError' }),
        twoLayerFile,
        /parameter 0 is float32\[10,5\] in the file \('[^']+'\) but float32\[10,7\] in the model \('[^']+'\)$/,
      ],
      [inferenceModel(tf.sequential({ layers: [dense(12, [10])] })), inferenceFile, /output 0 is float32\[1,10\] in the file but float32\[1,12\] in the model$/],
      [inferenceModel(tf.sequential({ layers: [dense(10, [12])] })), inferenceFile, /input 0 is float32\[1,10\] in the file, but the model takes \[any,12\]$/],
      [inferenceModel((t: tf.Tensor) => tf.matMul(t, tf.ones([12, 10]))), inferenceFile, /tracing it on the file's inputs \(input 0: float32\[1,10\]\) failed: /],
    ];
    for (const [executor, file, message] of cases) {
      const error = await executor.loadExecutable(file).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PoptfjsError);
      expect((error as Error).message.startsWith(`${file} does not match the wrapped model: `)).toBe(true);
      expect((error as Error).message).toMatch(message);
      expect(executor.isCompiled()).toBe(false);
      executor.destroy();
    }
  });

  it('refuses to load into an executor that is already compiled', async () => {
    const executor = trainingModel(linearModel(), { loss: 'meanSquaredError' });
    await executor.compile(x, y);
    await expect(executor.loadExecutable(path)).rejects.toThrow(/already compiled/);
    executor.destroy();
  });
});
