import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoptfjsError, POPTFJS_VERSION, readExecutableFile, tf, trainingModel, type PoplarExecutor } from 'poptfjs';
import { encodeExecutableFile, decodeExecutableFile, type ExecutableFileContents } from '../../lib/files/executable_file.js';
import { decodeCheckpointFile, encodeCheckpointFile } from '../../lib/files/checkpoint_file.js';
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';
import { decodeMessage, encodeMessage, Messages } from '../../lib/proto/executable_proto.js';
import type { Graph } from '../../lib/ir/graph.js';
import { executableProtoDescriptorSource } from '../../scripts/executable_proto_descriptor_source.js';
import { compiledVariants, linearModel, sample } from './fixtures.js';

let dir: string;
let variants: Array<{ name: string; executor: PoplarExecutor; inputs: tf.Tensor[] }>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'poptfjs-file-'));
  variants = await compiledVariants();
});

afterAll(() => {
  for (const v of variants ?? []) v.executor.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** Every corruption of `bytes` (each truncation, and each byte flipped) is refused with an error naming `file`. */
function expectAllCorruptionsRefused(bytes: Uint8Array, file: string, decode: (b: Uint8Array, f: string) => unknown): number {
  let refused = 0;
  const check = (corrupt: Uint8Array, what: string) => {
    try {
      decode(corrupt, file);
    } catch (error) {
      if (!(error instanceof PoptfjsError) || !error.message.includes(file)) throw new Error(`${what}: unexpected error ${String(error)}`);
      refused++;
      return;
    }
    throw new Error(`${what}: the corrupted file was accepted`);
  };
  for (let n = 0; n < bytes.length; n++) check(bytes.subarray(0, n), `truncated to ${n} bytes`);
  for (let i = 0; i < bytes.length; i++) {
    const corrupt = Uint8Array.from(bytes);
    corrupt[i] = corrupt[i]! ^ (1 << (i % 8));
    check(corrupt, `bit ${i % 8} of byte ${i} flipped`);
  }
  return refused;
}

describe('the executable file format', () => {
  it('is loaded from a descriptor generated from the committed executable.proto', () => {
    const committed = readFileSync(fileURLToPath(new URL('../../lib/proto/generated/executable_proto_descriptor.ts', import.meta.url)), 'utf8');
    expect(committed).toBe(executableProtoDescriptorSource());
  });

  it('round-trips every variant of a compiled executable exactly (graph, placement, schedule, hardware, numerics)', async () => {
    for (const { name, executor, inputs } of variants) {
      const path = join(dir, `${name.replace(/\W+/g, '_')}.poptfjs`);
      await executor.compileAndExport(path, ...inputs, { exportModel: false });
      const read = readExecutableFile(path);
      expect(read.executable, name).toStrictEqual(executor.executable);
    }
  });

  it('keeps every attribute and constant value exactly, NaN, infinities and -0 included', () => {
    const graph: Graph = {
      values: [
        { id: 0, shape: [3], dtype: 'float32', source: { kind: 'input', index: 0, name: 'input0' } },
        { id: 1, shape: [3], dtype: 'float32', source: { kind: 'constant', data: new Float32Array([Number.NaN, -0, Number.POSITIVE_INFINITY]) } },
        { id: 2, shape: [2], dtype: 'string', source: { kind: 'constant', data: ['a', 'é'] } },
        { id: 3, shape: [3], dtype: 'float32', source: { kind: 'node', node: 0, output: 0 }, precision: 'float16' },
      ],
      nodes: [
        {
          id: 0,
          kernel: 'ClipByValue',
          inputNames: ['x'],
          inputs: [1],
          attrs: { clipValueMin: Number.NEGATIVE_INFINITY, clipValueMax: -0, nested: { list: [null, true, 'x', [1.5e-300]] } },
          outputs: [3],
          annotations: { pass: 'forward', layer: 'l', block: 'b', ipu: 2 },
        },
      ],
      inputs: [0],
      roles: { outputs: [3] },
      assignments: [],
    };
    const decoded = graphFromMessage(decodeMessage(Messages.Graph, encodeMessage(Messages.Graph, graphMessage(graph)), 'test'), 'test');
    expect(decoded).toStrictEqual(graph);
    expect(Object.is((decoded.nodes[0]!.attrs as { clipValueMax: number }).clipValueMax, -0)).toBe(true);
  });

  it('refuses a file from another poptfjs version, naming both versions', () => {
    const { executor } = variants[0]!;
    const contents: ExecutableFileContents = decodeExecutableFile(readFileSync(join(dir, 'training_default_SGD.poptfjs')), 'x');
    const path = join(dir, 'old.poptfjs');
    writeFileSync(path, encodeExecutableFile(contents, '0.0.1-old'));
    expect(() => readExecutableFile(path)).toThrow(`${path} was written by poptfjs 0.0.1-old, and this is poptfjs ${POPTFJS_VERSION}`);
    expect(executor.isCompiled()).toBe(true);
  });

  it('refuses missing, empty, foreign and mistyped files with an error naming the file', () => {
    expect(() => readExecutableFile(join(dir, 'missing.poptfjs'))).toThrow(/missing\.poptfjs: no such file/);
    writeFileSync(join(dir, 'empty.poptfjs'), '');
    expect(() => readExecutableFile(join(dir, 'empty.poptfjs'))).toThrow(/empty\.poptfjs: not a poptfjs file \(it is empty\)/);
    writeFileSync(join(dir, 'model.json'), '{"modelTopology": {}}');
    expect(() => readExecutableFile(join(dir, 'model.json'))).toThrow(/model\.json: not a poptfjs file/);
    const checkpoint = encodeCheckpointFile({
      modelName: 'm',
      kind: 'training',
      inputSignature: [],
      microBatchSize: 1,
      factors: { deviceIterations: 1, replicationFactor: 1, inputGroupSize: 1, inputGroupType: 'Consecutive' as never, gradientAccumulation: 1 },
      parameters: [],
      deviceState: { optimizerStates: [], lossScale: 1, randomState: [1, 2, 3, 4], iterations: 0 },
      backend: 'cpu',
      createdUnixMs: 0,
    });
    writeFileSync(join(dir, 'checkpoint.ckpt'), checkpoint);
    expect(() => readExecutableFile(join(dir, 'checkpoint.ckpt'))).toThrow(/checkpoint\.ckpt holds a checkpoint, not an exported executable/);
  });

  it('refuses every truncation and every flipped bit of an exported executable with its model, never crashing', async () => {
    const model = linearModel();
    const executor = trainingModel(model, { loss: 'meanSquaredError' });
    const [x, y] = sample();
    tf.dispose(await executor(x, y));
    const path = join(dir, 'with_model.poptfjs');
    await executor.compileAndExport(path, x, y);
    executor.destroy();
    const bytes = readFileSync(path);
    const refused = expectAllCorruptionsRefused(bytes, 'with_model.poptfjs', decodeExecutableFile);
    expect(refused).toBe(2 * bytes.length);
  });

  it('refuses every truncation and every flipped bit of a checkpoint, never crashing', async () => {
    const model = linearModel();
    const executor = trainingModel(model, { loss: 'meanSquaredError' });
    const [x, y] = sample();
    tf.dispose(await executor(x, y));
    const path = join(dir, 'state.ckpt');
    executor.saveCheckpoint(path);
    executor.destroy();
    const bytes = readFileSync(path);
    expect(decodeCheckpointFile(bytes, 'state.ckpt').deviceState.iterations).toBe(1);
    expect(expectAllCorruptionsRefused(bytes, 'state.ckpt', decodeCheckpointFile)).toBe(2 * bytes.length);
  });
});
