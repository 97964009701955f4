/**
 * Crafted files: each is written by poptfjs's own writers, then one thing in
 * its message is made inconsistent and the file sealed again (a right hash),
 * as a hostile user would. Every loader must refuse it with an error naming
 * the file and what is wrong, before allocating what the file declares.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, assert, beforeAll, describe, expect, it, vi } from 'vitest';
import { inferenceModel, load, optim, Options, PoptfjsError, tf, trainingModel } from 'poptfjs';
import { decodeMessage, encodeMessage, Messages, type CheckpointFileMessage, type ExecutableFileMessage } from '../../lib/proto/executable_proto.js';
import { decodeFileEnvelope, encodeFileEnvelope } from '../../lib/files/file_envelope.js';
import { ExecutableCache } from '../../lib/files/executable_cache.js';
import { decodeExecutableFile } from '../../lib/files/executable_file.js';
import { linearModel, sample } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-crafted-'));
let exported: string;
let checkpoint: string;
const [x, y] = sample(4);

beforeAll(async () => {
  exported = join(dir, 'exported.poptfjs');
  const exporter = trainingModel(linearModel(), { options: new Options().useOfflineIpuTarget(2), loss: 'meanSquaredError' });
  await exporter.compileAndExport(exported, x, y);
  exporter.destroy();
  checkpoint = join(dir, 'checkpoint.poptfjs');
  const model = linearModel();
  const trainer = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1, momentum: 0.9 }) });
  tf.dispose(await trainer(x, y));
  trainer.saveCheckpoint(checkpoint);
  trainer.destroy();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

let crafted = 0;

/** A copy of the executable file with `edit` applied to its message, sealed again; its path. */
function craftExecutable(edit: (m: ExecutableFileMessage) => void, source = exported): string {
  const message = decodeMessage(Messages.ExecutableFile, decodeFileEnvelope(readFileSync(source), source, 'executable').payload, source);
  edit(message);
  const path = join(dir, `crafted-${++crafted}.poptfjs`);
  writeFileSync(path, encodeFileEnvelope('executable', encodeMessage(Messages.ExecutableFile, message)));
  return path;
}

/** A copy of the checkpoint with `edit` applied to its message, sealed again; its path. */
function craftCheckpoint(edit: (m: CheckpointFileMessage) => void): string {
  const message = decodeMessage(Messages.CheckpointFile, decodeFileEnvelope(readFileSync(checkpoint), checkpoint, 'checkpoint').payload, checkpoint);
  edit(message);
  const path = join(dir, `crafted-${++crafted}.poptfjs`);
  writeFileSync(path, encodeFileEnvelope('checkpoint', encodeMessage(Messages.CheckpointFile, message)));
  return path;
}

/** The message of the error `load` throws; fails if it throws none, or a non-PoptfjsError, or if it left more than 64 MB of array buffers allocated. */
async function refusal(load: () => Promise<unknown>): Promise<string> {
  const before = process.memoryUsage().arrayBuffers;
  const error = await load().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 2 ** 20);
  expect(error, 'the crafted file was accepted').toBeInstanceOf(PoptfjsError);
  return (error as Error).message;
}

const loadCheckpointInto = (path: string) => async () => {
  const model = linearModel();
  const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1, momentum: 0.9 }) });
  try {
    await executor.loadCheckpoint(path);
  } finally {
    executor.destroy();
  }
};

const loadExecutableInto = (path: string) => async () => {
  const executor = trainingModel(linearModel(), { loss: 'meanSquaredError' });
  try {
    await executor.loadExecutable(path);
  } finally {
    executor.destroy();
  }
};

/** The first parameter's name in the exported file. */
function firstParameter(m: ExecutableFileMessage | CheckpointFileMessage): string {
  return m.parameters[0]!.name;
}

describe('crafted executables', () => {
  it('a parameter declared as 3.6 GB is refused against the exported weights, before the model allocates it', async () => {
    let name = '';
    const path = craftExecutable((m) => {
      name = firstParameter(m);
      m.parameters[0]!.shape = [90_000_000, 10];
    });
    expect(await refusal(() => load(path))).toBe(`${path}: weight '${name}' of the exported model is float32[10,10], but the parameter is float32[90000000,10]`);
  });

  it('a weight declaring more elements than it stores is refused before anything is allocated', async () => {
    let name = '';
    const path = craftExecutable((m) => {
      const weight = m.model!.weights[0]!;
      name = weight.name;
      weight.tensor!.shape = [90_000_000, 10];
      m.parameters.find((p) => p.name === name)!.shape = [90_000_000, 10];
    });
    expect(await refusal(() => load(path))).toBe(`${path} weight '${name}': a float32[90000000,10] tensor needs 900000000 element(s), but 400 byte(s) are stored`);
  });

  it('an input signature declaring a 3.6 GB input is refused against the graph, for load() and loadExecutable()', async () => {
    const path = craftExecutable((m) => (m.executable!.input_signature[0]!.shape = [90_000_000, 10]));
    const expected = `${path}: input 0 is float32[90000000,10] in the signature, but float32[4,10] in the graph`;
    expect(await refusal(() => load(path))).toBe(expected);
    expect(await refusal(loadExecutableInto(path))).toBe(expected);
  });

  it('unknown dtypes, impossible shapes and unknown encodings are refused with the value they are in', async () => {
    const dtype = craftExecutable((m) => (m.executable!.graph!.values[0]!.dtype = 'float64'));
    expect(await refusal(() => load(dtype))).toBe(`${dtype} value %0: unknown dtype 'float64'; expected one of float32, int32, bool, string, complex64`);
    const rank = craftExecutable((m) => (m.executable!.graph!.values[0]!.shape = Array.from({ length: 17 }, () => 1)));
    expect(await refusal(() => load(rank))).toBe(`${rank} value %0: shape [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1] has rank 17; at most 16 is allowed`);
    const huge = craftExecutable((m) => (m.parameters[0]!.shape = [4_000_000_000, 4_000_000_000]));
    expect(await refusal(() => load(huge))).toMatch(
      new RegExp(`^${huge} parameter '[^']+': shape \\[4000000000,4000000000\\] has 16000000000000000000 elements, more than a tensor can hold \\(4294967295\\)$`),
    );
    const encoding = craftExecutable((m) => (m.model!.weights[0]!.tensor!.encoding = 4));
    expect(await refusal(() => load(encoding))).toMatch(new RegExp(`^${encoding} weight '[^']+': a float32 tensor is stored as STRING; expected FLOAT32, INT32 or UINT8$`));
  });

  it('a node reading a value made after it, or an attribute without a value, is refused naming the file and the node', async () => {
    let at = '';
    const order = craftExecutable((m) => {
      const nodes = m.executable!.graph!.nodes;
      const last = nodes.at(-1)!;
      nodes[0]!.inputs[0] = last.outputs[0]!;
      at = `node #0 (${nodes[0]!.kernel}) input 0 is %${last.outputs[0]} , which node #${last.id} makes after it`.replace(' ,', ',');
    });
    expect(await refusal(() => load(order))).toBe(`${order}: ${at}`);
    let attribute = '';
    const attr = craftExecutable((m) => {
      const node = m.executable!.graph!.nodes.find((n) => n.attrs.length > 0)!;
      node.attrs[0]!.value = {};
      attribute = `node #${node.id} (${node.kernel}) attribute '${node.attrs[0]!.key}'`;
    });
    expect(await refusal(() => load(attr))).toBe(`${attr} ${attribute}: attribute without a value`);
  });

  it("a value whose shape is not what its node's kernel makes is refused when read, not at run time", async () => {
    let expected = '';
    const path = craftExecutable((m) => {
      const graph = m.executable!.graph!;
      const node = graph.nodes.find((n) => n.kernel === 'MatMul' || n.kernel === '_FusedMatMul')!;
      const out = graph.values[node.outputs[0]!]!;
      const made = `float32[${out.shape.join(',')}]`;
      out.shape = [...out.shape.slice(0, -1), 7];
      const inputs = node.inputs.map((id) => `float32[${graph.values[id]!.shape.join(',')}]`).join(', ');
      expected = `${node.id} (${node.kernel}) output 0 is declared float32[${out.shape.join(',')}] (%${out.id}), but its kernel makes ${made} of its inputs ${inputs}`;
    });
    expect(await refusal(() => load(path))).toBe(`${path}: node #${expected}`);
  });

  it("a parameter value whose shape disagrees with the file's parameter, re-hashed, is refused when read, not when a kernel meets the weight", async () => {
    // Dense(16, relu) then Dense(4) on batches of 8: the first bias [16] declared [4, 4] passes the add-relu's shape rule,
    // and would meet the real [8, 16] activations at run time.
    const relu = join(dir, 'relu.poptfjs');
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 16, inputShape: [4], activation: 'relu' }), tf.layers.dense({ units: 4 })] });
    const exporter = trainingModel(model, { loss: 'meanSquaredError' });
    await exporter.compileAndExport(relu, tf.zeros([8, 4]), tf.zeros([8, 4]));
    exporter.destroy();
    let expected = '';
    const bias = craftExecutable((m) => {
      const value = m.executable!.graph!.values.find((v) => v.param !== undefined && v.shape.length === 1 && v.shape[0] === 16)!;
      value.shape = [4, 4];
      expected = `value %${value.id} of parameter '${value.param!.name}' is float32[4,4], but the parameter is float32[16]`;
    }, relu);
    expect(await refusal(() => load(bias))).toBe(`${bias}: ${expected}`);
    const forward = craftExecutable((m) => (m.model!.forward_graph!.values[m.model!.forward_graph!.inputs[0]!]!.shape = [40]));
    expect(await refusal(() => load(forward))).toBe(`${forward}: input 0 is float32[4,10] in the signature, but float32[40] in the exported model`);
  });

  it('a FIFO where a cache entry should be is discarded with a warning, without blocking, and replaced by the compiled entry', async () => {
    const cacheDir = join(dir, 'fifo-cache');
    const first = inferenceModel(linearModel(6), { options: new Options().enableExecutableCaching(cacheDir) });
    await first.compile(x);
    first.destroy();
    const name = readdirSync(cacheDir).find((f) => f.endsWith('.poptfjs'))!;
    const entry = join(cacheDir, name);
    const stored = readFileSync(entry);
    rmSync(entry);
    execFileSync('mkfifo', [entry]);
    const warnings: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((line) => (warnings.push(String(line)), true));
    try {
      const cache = new ExecutableCache();
      const contents = decodeExecutableFile(stored, entry);
      const obtained = await cache.obtain({ memory: 'none', disk: name.replace('.poptfjs', '') }, cacheDir, () => contents);
      expect(obtained.source).toBe('compiled');
    } finally {
      spy.mockRestore();
    }
    expect(warnings.join('')).toContain(
      `discarding the executable cache entry ${entry}, which cannot be used (cannot read ${entry}: it is a FIFO (named pipe), not a regular file); compiling again`,
    );
    expect(statSync(entry).isFile()).toBe(true);
  });

  it('a cache entry that is crafted is discarded with a warning naming it and what is wrong, and compiled again', async () => {
    const cacheDir = join(dir, 'cache');
    const options = () => new Options().enableExecutableCaching(cacheDir);
    const first = inferenceModel(linearModel(5), { options: options() });
    await first.compile(x);
    first.destroy();
    const entry = join(cacheDir, readdirSync(cacheDir).find((f) => f.endsWith('.poptfjs'))!);
    writeFileSync(entry, readFileSync(craftExecutable((m) => (m.executable!.graph!.values[0]!.dtype = 'float64'), entry)));
    const warnings: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((line) => (warnings.push(String(line)), true));
    const second = inferenceModel(linearModel(5), { options: options() });
    try {
      await new ExecutableCache().obtain(
        {
          memory: 'none',
          disk: readdirSync(cacheDir)
            .find((f) => f.endsWith('.poptfjs'))!
            .replace('.poptfjs', ''),
        },
        cacheDir,
        () => {
          throw new Error('compiled');
        },
      );
    } catch (error) {
      expect((error as Error).message).toBe('compiled');
    } finally {
      spy.mockRestore();
      second.destroy();
    }
    expect(warnings.join('')).toContain(
      `discarding the executable cache entry ${entry}, which cannot be used (${entry} value %0: unknown dtype 'float64'; expected one of float32, int32, bool, string, complex64); compiling again`,
    );
  });
});

/** Replaces, everywhere in `message`, the string `from` by `to` (also as a JSON string inside JSON text). */
function renameEverywhere<T>(message: T, from: string, to: string): T {
  const visit = (node: unknown): unknown => {
    if (typeof node === 'string') return node === from ? to : node.split(JSON.stringify(from)).join(JSON.stringify(to));
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object' || node instanceof Uint8Array) return node;
    for (const key of Object.keys(node)) (node as Record<string, unknown>)[key] = visit((node as Record<string, unknown>)[key]);
    return node;
  };
  return visit(message) as T;
}

/** The numbers of what a call returned, and of the weights after it. */
async function callNumbers(executor: Awaited<ReturnType<typeof load>>, inputs: tf.Tensor[]): Promise<number[][]> {
  const out = await executor(...inputs);
  const numbers = [out].flat(4).map((t) => Array.from((t as tf.Tensor).dataSync()));
  tf.dispose(out as tf.Tensor);
  const model = executor.model;
  assert(model instanceof tf.LayersModel, 'expected an executor of a tf.LayersModel');
  return [...numbers, ...model.getWeights().map((w) => Array.from(w.dataSync()))];
}

/** Whether `m` is an executable file's message rather than a checkpoint's. */
function isExecutableFile(m: ExecutableFileMessage | CheckpointFileMessage): m is ExecutableFileMessage {
  return 'executable' in m;
}

/** Hostile names: keys of every object's prototype, and names tfjs does not take for a tensor. */
const HOSTILE_NAMES = ['__proto__', 'constructor', '__proto___input0', 'not a name!'];

describe('crafted names', () => {
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype);
  /** The model, its first input, its parameters and its layer named after `name` (the bias `hasOwnProperty`). */
  const renamed = <T extends ExecutableFileMessage | CheckpointFileMessage>(m: T, name: string): T => {
    const kernel = m.parameters[0]!.name;
    const layer = kernel.slice(0, kernel.indexOf('/'));
    renameEverywhere(m, m.parameters[1]!.name, 'hasOwnProperty');
    renameEverywhere(m, kernel, name);
    renameEverywhere(m, layer, name);
    return renameEverywhere(m, isExecutableFile(m) ? m.executable!.model_name : m.model_name, name);
  };

  it('an executable whose model, input, parameter and layer names are prototype keys or no tensor names loads and runs as the original, for load() and loadExecutable()', async () => {
    const original = await load(exported);
    const expected = await callNumbers(original, [x, y]);
    original.destroy();
    for (const name of HOSTILE_NAMES) {
      const path = craftExecutable((m) => {
        renamed(m, name);
        for (const graph of [m.executable!.graph!, m.model!.forward_graph!]) graph.values.find((v) => v.input)!.input!.name = name;
        m.model!.model_id = `${name} model`;
      });
      const loaded = await load(path);
      expect(loaded.model.name, name).toBe(name);
      expect(await callNumbers(loaded, [x, y]), name).toEqual(expected);
      loaded.destroy();
      const into = trainingModel(linearModel(), { loss: 'meanSquaredError' });
      await into.loadExecutable(path);
      expect(await callNumbers(into, [x, y]), name).toEqual(expected);
      into.destroy();
    }
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeKeys);
  });

  it('a checkpoint whose model, parameter and layer names are prototype keys or no tensor names restores the state of the original', async () => {
    const restored = async (path: string) => {
      const model = linearModel(7);
      const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1, momentum: 0.9 }) });
      await executor.loadCheckpoint(path);
      const numbers = [...(await callNumbers(executor, [x, y])), ...(await callNumbers(executor, [x, y]))];
      executor.destroy();
      return numbers;
    };
    const expected = await restored(checkpoint);
    for (const name of HOSTILE_NAMES) expect(await restored(craftCheckpoint((m) => renamed(m, name))), name).toEqual(expected);
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeKeys);
  });

  it('two parameters of one name are refused naming the file and the name, for load(), loadExecutable() and loadCheckpoint()', async () => {
    let name = '';
    const alike = (m: ExecutableFileMessage | CheckpointFileMessage) => {
      name = m.parameters[0]!.name;
      m.parameters[1]!.name = name;
    };
    const path = craftExecutable(alike);
    const expected = `${path}: parameters 0 and 1 are both named '${name}'; each parameter needs a name of its own`;
    expect(await refusal(() => load(path))).toBe(expected);
    expect(await refusal(loadExecutableInto(path))).toBe(expected);
    const checkpointPath = craftCheckpoint(alike);
    expect(await refusal(loadCheckpointInto(checkpointPath))).toBe(`${checkpointPath}: parameters 0 and 1 are both named '${name}'; each parameter needs a name of its own`);
  });
});

describe('crafted checkpoints', () => {
  it('an input declared as 3.6 GB is refused against the memory tensors may take, before the model is traced on it', async () => {
    const path = craftCheckpoint((m) => {
      m.input_signature[0]!.shape = [90_000_000, 10];
      m.input_signature[1]!.shape = [90_000_000, 10];
      m.micro_batch_size = 90_000_000;
    });
    vi.stubEnv('POPTFJS_HOST_MEMORY_LIMIT', '64MiB');
    try {
      expect(await refusal(loadCheckpointInto(path))).toBe(
        `${path} declares inputs float32[90000000,10], float32[90000000,10], which take 6.7 GiB: more than the 56.0 MiB tensors may take in a heap of 64MiB (POPTFJS_HOST_MEMORY_LIMIT)`,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('an input the model does not take is refused before the model is traced on it', async () => {
    const path = craftCheckpoint((m) => (m.input_signature[0]!.shape = [4, 90_000_000]));
    expect(await refusal(loadCheckpointInto(path))).toBe(`${path} does not match the wrapped model: input 0 is float32[4,90000000] in the file, but the model takes [any,10]`);
  });

  it('a weight declaring 3.6 GB with 400 bytes stored, or an unknown dtype, is refused before anything is allocated', async () => {
    let name = '';
    const size = craftCheckpoint((m) => {
      const weight = m.device_state!.weights[0]!;
      name = weight.param;
      weight.values[0]!.shape = [90_000_000, 10];
    });
    expect(await refusal(loadCheckpointInto(size))).toBe(
      `${size} weight '${name}' value 0: a float32[90000000,10] tensor needs 900000000 element(s), but 400 byte(s) are stored`,
    );
    const dtype = craftCheckpoint((m) => (m.device_state!.weights[0]!.values[0]!.dtype = 'float64'));
    expect(await refusal(loadCheckpointInto(dtype))).toBe(
      `${dtype} weight '${name}' value 0: unknown dtype 'float64'; expected one of float32, int32, bool, string, complex64`,
    );
  });

  it('an optimizer slot of another shape than its weight is refused at load, not when training broadcasts it', async () => {
    let slot = '';
    const path = craftCheckpoint((m) => {
      const parameter = m.device_state!.optimizer_states[0]!.parameters.find((p) => p.slots.length > 0)!;
      const named = parameter.slots[0]!;
      named.tensor = { shape: [3], dtype: 'float32', encoding: 1, data: new Uint8Array(12), strings: [] };
      slot = `optimizer slot '${named.name}' of '`;
    });
    const message = await refusal(loadCheckpointInto(path));
    expect(message.startsWith(`${path}: the device state holds ${slot}`)).toBe(true);
    expect(message).toMatch(/' as float32\[3\], but the weight is float32\[(10,10|10)\]$/);
  });
});
