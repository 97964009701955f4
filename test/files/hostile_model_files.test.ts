import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSystemHandler, loadLayersModelFile, tf } from 'poptfjs';
import { readLayersModelJson } from '../../lib/files/layers_model_json.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-hostile-models-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// biome-ignore lint/suspicious/noExplicitAny: the tests edit model.json files freely, as a hostile user would.
type ModelJson = Record<string, any>;
const sequential = join(dir, 'sequential');
const functional = join(dir, 'functional');
const nested = join(dir, 'nested');

beforeAll(async () => {
  const seq = tf.sequential({
    layers: [
      tf.layers.conv2d({ filters: 4, kernelSize: 3, inputShape: [8, 8, 3], name: 'conv' }),
      tf.layers.flatten({ name: 'flatten' }),
      tf.layers.dense({ units: 10, name: 'logits' }),
    ],
  });
  await seq.save(fileSystemHandler(sequential));
  // x → a → b, and c = a + b: layer a is read by two layers.
  const x = tf.input({ shape: [6], name: 'x' });
  const a = tf.layers.dense({ units: 4, name: 'a' }).apply(x) as tf.SymbolicTensor;
  const b = tf.layers.dense({ units: 4, name: 'b' }).apply(a) as tf.SymbolicTensor;
  const c = tf.layers.add({ name: 'c' }).apply([a, b]) as tf.SymbolicTensor;
  await tf.model({ inputs: x, outputs: c, name: 'fn' }).save(fileSystemHandler(functional));
  // A Sequential model called as a layer of a functional one (its first call from outside is its call 1).
  const inner = tf.sequential({ name: 'inner', layers: [tf.layers.dense({ units: 3, inputShape: [4], name: 'inner_dense' })] });
  const x2 = tf.input({ shape: [4], name: 'x2' });
  const y2 = tf.layers.dense({ units: 2, name: 'after' }).apply(inner.apply(x2) as tf.SymbolicTensor) as tf.SymbolicTensor;
  await tf.model({ inputs: x2, outputs: y2, name: 'nested' }).save(fileSystemHandler(nested));
});

let count = 0;
/** A copy of the saved model `base` with its model.json changed by `change` (which may return the file's text); its model.json. */
function variant(base: string, change: (json: ModelJson, folder: string) => unknown): string {
  const folder = join(dir, `variant-${count++}`);
  mkdirSync(folder);
  for (const name of readdirSync(base)) if (name.endsWith('.bin')) cpSync(join(base, name), join(folder, name));
  const json = JSON.parse(readFileSync(join(base, 'model.json'), 'utf8')) as ModelJson;
  const changed = change(json, folder) ?? json;
  writeFileSync(join(folder, 'model.json'), typeof changed === 'string' ? changed : JSON.stringify(changed));
  return join(folder, 'model.json');
}

const layersOf = (json: ModelJson) => json.modelTopology.config.layers as ModelJson[];
const firstWeight = (json: ModelJson) => json.weightsManifest[0].weights[0] as ModelJson;
const layerNamed = (json: ModelJson, name: string) => layersOf(json).find((l) => l.name === name)!;

/** Expects reading `file` to fail with an error that names it and says `message`. */
function refused(file: string, message: string | RegExp): void {
  let error: unknown;
  try {
    readLayersModelJson(file);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(Error);
  const text = (error as Error).message;
  expect(text.startsWith(`${file}: `) || text.startsWith(`cannot read ${file}`)).toBe(true);
  if (typeof message === 'string') expect(text).toContain(message);
  else expect(text).toMatch(message);
}

describe('a model.json poptfjs reads', () => {
  it('is refused when its modelTopology is not a model', () => {
    refused(
      variant(sequential, (j) => ({ ...j, modelTopology: 'abc' })),
      'modelTopology must be an object ({ class_name, config }), got "abc"',
    );
    refused(
      variant(sequential, (j) => ({ ...j, modelTopology: null })),
      'modelTopology must be an object ({ class_name, config }), got null',
    );
    refused(
      variant(sequential, (j) => ({ ...j, modelTopology: { class_name: 'Sequential' } })),
      'the model (Sequential) has no list of layers in its config',
    );
    refused(
      variant(sequential, (j) => ({ ...j, modelTopology: { class_name: 'Dense', config: {} } })),
      "the model is a 'Dense'; a tfjs layers model is a Sequential, Model, Functional",
    );
  });

  it('is refused when a weight has a dtype poptfjs does not read or a shape that is not a list of sizes', () => {
    for (const dtype of ['float64', 'int8', 'string']) {
      refused(
        variant(sequential, (j) => {
          firstWeight(j).dtype = dtype;
        }),
        `weight 'conv/kernel': dtype "${dtype}" is not one poptfjs reads; expected float32, int32, bool`,
      );
    }
    for (const shape of ['abc', { 0: 3 }, [3, -1], [3, 2.5], [2 ** 31, 1]]) {
      refused(
        variant(sequential, (j) => {
          firstWeight(j).shape = shape;
        }),
        `weight 'conv/kernel': its shape must be a list of integers from 0 to 2147483647, got ${JSON.stringify(shape)}`,
      );
    }
  });

  it('is refused when an input shape has a dimension that is not a positive integer', () => {
    for (const d of [-8, 8.5, 0, '8', 1e300]) {
      refused(
        variant(sequential, (j) => {
          layersOf(j)[0]!.config.batch_input_shape = [null, d, 8, 3];
        }),
        `layer 'conv': dimension 1 of its batch_input_shape [null,${JSON.stringify(d)},8,3] is ${JSON.stringify(d)}; a dimension is null or an integer from 1 to 2147483647`,
      );
    }
  });

  it('is refused when a class is not one tfjs knows, Object.prototype names included', () => {
    for (const name of ['Lambda', '__proto__', 'constructor', 'toString']) {
      refused(
        variant(sequential, (j) => {
          layersOf(j)[1]!.class_name = name;
        }),
        `modelTopology.config.layers[1] (layer 'flatten'): unknown class "${name}"; tfjs has no layer, initializer or optimizer of that name`,
      );
    }
    refused(
      variant(sequential, (j) => ({ ...j, trainingConfig: { loss: 'mean_squared_error', optimizer_config: { class_name: 'constructor', config: {} } } })),
      'trainingConfig.optimizer_config: unknown class "constructor"',
    );
  });

  it('is refused when two layers have one name, or a name is not one tfjs can give weights', () => {
    refused(
      variant(sequential, (j) => {
        layersOf(j)[2]!.config.name = 'conv';
      }),
      "two layers are named 'conv'; the layers of a model have names of their own",
    );
    refused(
      variant(sequential, (j) => {
        layersOf(j)[2]!.config.name = 'bad name!';
      }),
      `the name of layer 2 of the model "bad name!" is not a valid name: it must start with a letter or a digit`,
    );
  });

  it('is refused, in bounded time and memory, when it nests thousands of levels deep or names a layer with 50 MB', () => {
    refused(
      variant(sequential, (j) => {
        let initializer: ModelJson = { class_name: 'Zeros', config: {} };
        for (let i = 0; i < 2000; i++) initializer = { class_name: 'Zeros', config: { nested: initializer } };
        layersOf(j)[0]!.config.bias_initializer = initializer;
      }),
      'the file nests objects and arrays more than 100 levels deep',
    );
    refused(
      variant(sequential, () => `{"modelTopology":${'['.repeat(100_000)}${']'.repeat(100_000)},"weightsManifest":[]}`),
      'the file nests objects and arrays more than 100 levels deep',
    );
    refused(
      variant(sequential, (j) => {
        layersOf(j)[2]!.config.name = 'x'.repeat(50_000_000);
      }),
      'the name of layer 2 of the model has 50000000 characters; names have at most 1024',
    );
  });

  it("is refused when a functional model's layers read each other in a cycle, themselves, a layer it does not have or a call never made", () => {
    const reads = (layer: string, inbound: unknown[]) =>
      variant(functional, (j) => {
        layerNamed(j, layer).inbound_nodes = [[inbound]];
      });
    refused(reads('a', ['b', 0, 0, {}]), "layers 'a' → 'b' → 'a' read each other's outputs in a cycle: no order computes them");
    refused(reads('b', ['b', 0, 0, {}]), "layer 'b' reads its own output: no order computes it");
    refused(reads('b', ['zz', 0, 0, {}]), "layer 'b' reads layer 'zz', which the model does not have");
    refused(reads('b', ['a', 3, 0, {}]), "layer 'b' reads call 3 of layer 'a', which is called 1 time(s) (calls count from 0)");
    refused(reads('b', ['a', -1, 0, {}]), 'layer \'b\': an inbound tensor must be [layer name, call index, output index, kwargs], got ["a",-1,0,{}]');
    refused(
      variant(functional, (j) => {
        j.modelTopology.config.output_layers = [['zz', 0, 0]];
      }),
      "the model's output_layers name layer 'zz', which the model does not have",
    );
  });

  it("is refused when a weights file lies outside the model's folder, before anything is read", () => {
    const outside = join(dir, 'outside.bin');
    writeFileSync(outside, new Uint8Array(16));
    for (const path of ['../outside.bin', '/dev/zero', '../../../../../../dev/urandom']) {
      const file = variant(sequential, (j) => {
        j.weightsManifest[0].paths = [path];
      });
      refused(file, `weights file '${path}' lies outside the model's folder ${join(file, '..')}; a model's weights files are beside its model.json`);
    }
  });

  it('reads only regular files: a FIFO or /dev/zero as the model.json is refused without blocking or reading', () => {
    const fifo = join(dir, 'fifo-model');
    mkdirSync(fifo);
    execFileSync('mkfifo', [join(fifo, 'model.json')]);
    refused(join(fifo, 'model.json'), 'it is a FIFO (named pipe), not a regular file');
    const zero = join(dir, 'zero-model');
    mkdirSync(zero);
    symlinkSync('/dev/zero', join(zero, 'model.json'));
    refused(join(zero, 'model.json'), 'it is a character device, not a regular file');
    const large = join(dir, 'large-model');
    mkdirSync(large);
    writeFileSync(join(large, 'model.json'), '');
    truncateSync(join(large, 'model.json'), 65 * 2 ** 20);
    refused(join(large, 'model.json'), `it has ${65 * 2 ** 20} bytes, more than the ${64 * 2 ** 20} a model.json may have`);
  });

  it('reads weights files only when they are regular files holding the bytes the manifest declares', async () => {
    const load = (file: string) => loadLayersModelFile(file);
    const fifo = variant(sequential, (j, folder) => {
      execFileSync('mkfifo', [join(folder, 'fifo.bin')]);
      j.weightsManifest[0].paths = ['./fifo.bin'];
    });
    await expect(load(fifo)).rejects.toThrow(`cannot read ${join(fifo, '../fifo.bin')}: it is a FIFO (named pipe), not a regular file`);
    const zero = variant(sequential, (j, folder) => {
      symlinkSync('/dev/zero', join(folder, 'zero.bin'));
      j.weightsManifest[0].paths = ['./zero.bin'];
    });
    await expect(load(zero)).rejects.toThrow(`cannot read ${join(zero, '../zero.bin')}: it is a character device, not a regular file`);
    // A weights file of 16 GiB (sparse): its size is compared with the manifest's before a byte is read. The model has
    // 3·3·3·4 + 4 (conv) + 6·6·4·10 + 10 (logits) = 1562 float32 weights, 6248 bytes.
    const huge = variant(sequential, (j, folder) => {
      writeFileSync(join(folder, 'huge.bin'), '');
      truncateSync(join(folder, 'huge.bin'), 2 ** 34);
      j.weightsManifest[0].paths = ['./huge.bin'];
    });
    await expect(load(huge)).rejects.toThrow(`${huge}: the manifest describes 6248 bytes of weights, but the weights files hold 17179869184`);
  });

  it("names the file in tfjs's own errors about a layer's config, and loads the models it describes", async () => {
    const cases: Array<[(j: ModelJson) => void, string]> = [
      [(j) => (layersOf(j)[2]!.config.units = -3), 'Expected units to be a positive integer, but got -3.'],
      [(j) => (layersOf(j)[2]!.config.units = 2.5), 'Expected units to be a positive integer, but got 2.5.'],
      [(j) => (layersOf(j)[2]!.config.units = '10'), 'Expected units to be a positive integer, but got "10".'],
      [(j) => (layersOf(j)[0]!.config.kernel_size = [9, 9]), 'Shape mismatch: [9,9,3,4] vs. [3,3,3,4]'],
      [(j) => (j.trainingConfig = { loss: 'nonexistent', metrics: [], optimizer_config: { class_name: 'SGD', config: { learning_rate: 0.01 } } }), 'Unknown loss nonexistent'],
    ];
    for (const [change, message] of cases) {
      const file = variant(sequential, (j) => {
        change(j);
      });
      await expect(loadLayersModelFile(file)).rejects.toThrow(`${file}: tfjs cannot build the model it describes: ${message}`);
    }
    for (const [saved, layers] of [
      [sequential, ['conv', 'flatten', 'logits']],
      [functional, ['x', 'a', 'b', 'c']],
      [nested, ['x2', 'inner', 'after']],
    ] as const) {
      const model = await loadLayersModelFile(saved);
      expect(model.layers.map((l) => l.name)).toEqual(layers);
      model.dispose();
    }
  });
});
