/**
 * `ops.ipuPrintTensor`: the identity that prints its tensor each time the
 * device runs it, traced as a node of its own (`poptfjs.IpuPrintTensor`).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Block, Options, ShardedExecution, Stage, inferenceModel, load, ops, optim, plan, setPopartLogLevel, trainingModel, withShapeOnlyBackend } from 'poptfjs';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { isViewNode } from '../../lib/ir/value_views.js';
import { configureLoggingFromEnv } from '../../lib/common/log.js';
import { graphFromMessage, graphMessage } from '../../lib/proto/graph_message.js';
import { DEFAULT_TENSOR_TEXT_FORMAT, tensorText, type TensorTextFormat } from '../../lib/runtime/tensor_text.js';
import { expectClose, smallIpuTarget } from '../helpers.js';

const LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z poptfjs:op \d+\.\d+ I: /;

/** The messages `op` printed while `fn` ran (multi-line messages whole). */
async function printed(fn: () => Promise<unknown> | unknown): Promise<string[]> {
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return chunks.filter((c) => LINE.test(c)).map((c) => c.replace(LINE, '').replace(/\n$/, ''));
}

/** PopTorch's test values (tests/ipu_print_tensor_test.py: torch.rand((2, 2)) + 1 with seed 0). */
const X = [
  [0.4962566, 0.7682219],
  [0.0884774, 0.1320305],
];

afterEach(() => configureLoggingFromEnv({}));

describe('ops.ipuPrintTensor', () => {
  it('returns its input and prints it with its title once per micro-batch, only when the device runs', async () => {
    const fn = (x: tf.Tensor) => tf.mul(ops.ipuPrintTensor(tf.add(x, 1), 'sum', { digits: 3 }), 2);
    const x = tf.tensor2d([
      [1, 2],
      [3, 4],
      [5, 6],
      [7, 8],
    ]);
    // Eagerly it is the identity and prints nothing, as PopTorch's op on the CPU.
    expect(await printed(() => expectClose(fn(x), tf.mul(tf.add(x, 1), 2)))).toEqual([]);
    const executor = inferenceModel(fn, { options: new Options().deviceIterations(2) });
    expect(await printed(() => executor.compile(x))).toEqual([]);
    let out: tf.Tensor | undefined;
    const lines = await printed(async () => (out = (await executor.run(x)) as tf.Tensor));
    expectClose(out!, tf.mul(tf.add(x, 1), 2));
    expect(lines).toEqual(['sum: (\n (2.00,3.00)\n (4.00,5.00)\n)', 'sum: (\n (6.00,7.00)\n (8.00,9.00)\n)']);
  });

  it.each([
    // PopTorch's three cases: title, summarise threshold, edge items, line width, digits, float format, separator, brackets.
    [
      { summariseThreshold: 1000, edgeItems: 3, maxLineWidth: 75, digits: 8, floatFormat: 'auto', separator: ' ', openBracket: '{', closeBracket: '}' },
      'title: {\n {1.4962566 1.7682219}\n {1.0884774 1.1320305}\n}',
    ],
    [
      { summariseThreshold: 500, edgeItems: 2, maxLineWidth: 15, digits: 8, floatFormat: 'scientific', separator: ',', openBracket: '[', closeBracket: ']' },
      'title: [\n [1.4962566e+00,\n   1.7682219e+00]\n [1.0884774e+00,\n   1.1320305e+00]\n]',
    ],
    [
      { summariseThreshold: 1500, edgeItems: 1, maxLineWidth: 125, digits: 8, floatFormat: 'fixed', separator: ';', openBracket: '(', closeBracket: ')' },
      'title: (\n (1.4962566;1.7682219)\n (1.0884774;1.1320305)\n)',
    ],
  ] as const)('prints as PopTorch does with %j', async (format, expected) => {
    const bias = tf.variable(tf.zeros([]), true);
    const executor = inferenceModel((x: tf.Tensor) => tf.add(ops.ipuPrintTensor(tf.add(x, 1), 'title', format), bias));
    expect(await printed(() => executor.run(tf.tensor2d(X)))).toEqual([expected]);
  });

  it('prints the gradient in training, titled <title>_gradient, unless printGradient is false', async () => {
    const run = async (printGradient: boolean) => {
      const w = tf.variable(
        tf.tensor2d([
          [1, 2],
          [3, 4],
        ]),
        true,
      );
      const fn = (x: tf.Tensor) => {
        const h = ops.ipuPrintTensor(tf.matMul(x, w), 'h', { printGradient, digits: 2, floatFormat: 'none' });
        return [h, ops.identityLoss(tf.sum(tf.square(h)), 'sum')];
      };
      const executor = trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0 }) });
      return printed(() =>
        executor.run(
          tf.tensor2d([
            [1, 0],
            [0, 2],
          ]),
        ),
      );
    };
    // h = x·w = [[1, 2], [6, 8]]; d(sum h²)/dh = 2h.
    expect(await run(true)).toEqual(['h: (\n (1,2)\n (6,8)\n)', 'h_gradient: (\n ( 2, 4)\n (12,16)\n)']);
    expect(await run(false)).toEqual(['h: (\n (1,2)\n (6,8)\n)']);
  });

  it('is traced as a node of its own that patterns keep and executables carry, and prints after load()', async () => {
    const fn = (x: tf.Tensor) => tf.relu(ops.ipuPrintTensor(tf.neg(x), 'negated', { digits: 1 }));
    const executor = inferenceModel(fn);
    const x = tf.tensor1d([1, -2]);
    await executor.compile(x);
    expect(executor.irText()).toMatch(
      /= poptfjs\.IpuPrintTensor\(x=%\d+\) \{title="negated", printGradient=true, summariseThreshold=1000, edgeItems=3, maxLineWidth=80, digits=1, floatFormat="auto", separator=",", openBracket="\(", closeBracket="\)"\}/,
    );
    const graph = executor.executable.graph;
    expect(graphFromMessage(graphMessage(graph), 'test').nodes.find((n) => n.kernel === 'poptfjs.IpuPrintTensor')!.attrs.title).toBe('negated');
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-print-')), 'print.poptfjs');
    await executor.compileAndExport(file, x);
    const loaded = await load(file);
    expect(await printed(() => loaded.run(x))).toEqual(['negated: (-1, 2)']);
  });

  it('costs a copy of the tensor on its tiles and its bytes over the host link; its output takes memory', async () => {
    const executor = inferenceModel((x: tf.Tensor) => tf.relu(ops.ipuPrintTensor(tf.neg(x))), { options: new Options().ipuTarget({ tiles: 4 }) });
    await executor.compile(tf.zeros([8, 16]));
    const graph = executor.executable.graph;
    const node = graph.nodes.find((n) => n.kernel === 'poptfjs.IpuPrintTensor')!;
    expect(isViewNode(graph, node)).toBe(false);
    const target = smallIpuTarget({ tiles: 4, hostBytesPerCycle: 2 });
    // 8 × 16 float32 = 512 bytes: 128 a tile copied at 8 bytes a cycle after a vertex's 170; 512 bytes to the host at 2 a cycle; one sync of 90.
    expect(kernelCost(graph, node, target)).toEqual({ compute: 170 + 128 / 8, exchange: 512 / 2, sync: 90, temporaryBytes: 0 });
  });

  it('prints through the logger at every level but OFF', async () => {
    const fn = (x: tf.Tensor) => ops.ipuPrintTensor(tf.add(x, 0), 'v', { digits: 2 });
    const executor = inferenceModel(fn);
    const x = tf.tensor1d([1.5]);
    setPopartLogLevel('ERR');
    expect(await printed(() => executor.run(x))).toEqual(['v: (1.5)']);
    setPopartLogLevel('OFF');
    expect(await printed(() => executor.run(x))).toEqual([]);
  });

  it('prints from worker IPUs, each on its own thread', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-print-')), 'log.txt');
    process.env.POPTFJS_LOG_DEST = file;
    try {
      const fn = (x: tf.Tensor) => {
        const a = Block.run({ userId: 'b0', ipuId: 0 }, () => ops.ipuPrintTensor(tf.add(x, 1), 'first'));
        return Block.run({ userId: 'b1', ipuId: 1 }, () => ops.ipuPrintTensor(tf.mul(a, 2), 'second'));
      };
      const options = new Options().parallelIpus(true);
      options.setExecutionStrategy(ShardedExecution(Stage('b0').ipu(0), Stage('b1').ipu(1)));
      const executor = inferenceModel(fn, { options });
      expectClose((await executor.run(tf.tensor1d([1, 2]))) as tf.Tensor, tf.tensor1d([4, 6]));
      executor.destroy();
    } finally {
      delete process.env.POPTFJS_LOG_DEST;
    }
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.map((l) => l.replace(LINE, ''))).toEqual(['first: (2.000,3.000)', 'second: (4.000,6.000)']);
    const threads = lines.map((l) => / \d+\.(\d+) I: /.exec(l)![1]);
    expect(threads[0]).not.toBe('0');
    expect(threads[1]).not.toBe(threads[0]);
  });

  it('plans with shapes only', async () => {
    const result = await plan(() => (x: tf.Tensor) => ops.ipuPrintTensor(tf.relu(x), 'r'), { inputs: [{ shape: [4, 8] }] });
    expect(result.fits).toBe(true);
    expect(await withShapeOnlyBackend(() => ops.ipuPrintTensor(tf.zeros([3, 2])).shape)).toEqual([3, 2]);
  });

  it('refuses bad arguments with messages that say what is expected', () => {
    const x = tf.zeros([2]);
    expect(() => ops.ipuPrintTensor([1, 2] as unknown as tf.Tensor)).toThrow('ipuPrintTensor: expected a tf.Tensor to print, got object');
    expect(() => ops.ipuPrintTensor(x, 3 as unknown as string)).toThrow('ipuPrintTensor: the title must be a string, got number');
    expect(() => ops.ipuPrintTensor(x, 't', { digts: 3 } as never)).toThrow(/unknown option 'digts'; expected one of printGradient, summariseThreshold, edgeItems/);
    expect(() => ops.ipuPrintTensor(x, 't', { edgeItems: -1 })).toThrow('ipuPrintTensor: edgeItems must be a non-negative integer, got -1');
    expect(() => ops.ipuPrintTensor(x, 't', { floatFormat: 'hex' as never })).toThrow(
      `ipuPrintTensor: floatFormat must be one of 'auto', 'fixed', 'scientific', 'none', got "hex"`,
    );
    expect(() => ops.ipuPrintTensor(x, 't', { separator: ', ' })).toThrow('ipuPrintTensor: separator must be one character (Poplar prints one), got ", "');
    expect(() => ops.ipuPrintTensor(x, 't', { printGradient: 'yes' as never })).toThrow('ipuPrintTensor: printGradient must be a boolean, got string');
    expect(() => ops.ipuPrintTensor(tf.tensor(['a']))).toThrow('ipuPrintTensor: cannot print a string tensor');
  });

  it('names ops.ipuPrintTensor, which exists, when a model reads a value while traced', async () => {
    const executor = inferenceModel((x: tf.Tensor) => tf.scalar(x.dataSync()[0]!));
    await expect(executor.compile(tf.ones([1]))).rejects.toThrow(/use x = ops\.ipuPrintTensor\(x, title\), which prints it each time the model runs/);
    expect(typeof ops.ipuPrintTensor).toBe('function');
  });
});

describe('tensor text', () => {
  const format = (f: Partial<TensorTextFormat>): TensorTextFormat => ({ ...DEFAULT_TENSOR_TEXT_FORMAT, ...f });

  it('summarises a tensor over the threshold to its edge items in every long dimension', () => {
    const values = Array.from({ length: 40 }, (_, i) => i);
    expect(tensorText(values, [40], 'int32', format({ summariseThreshold: 10, edgeItems: 2 }))).toBe('( 0, 1,...,38,39)');
    expect(tensorText(values, [8, 5], 'int32', format({ summariseThreshold: 10, edgeItems: 1 }))).toBe('(\n ( 0,..., 4)\n ...\n (35,...,39)\n)');
    expect(tensorText(values, [40], 'int32', format({ summariseThreshold: 0, maxLineWidth: 0, digits: 0 }))).toBe(`(${values.join(',')})`);
  });

  it('nests tensors of rank 3 and prints scalars, booleans, NaN and infinities', () => {
    expect(tensorText([1, 2, 3, 4, 5, 6, 7, 8], [2, 2, 2], 'int32', format({}))).toBe('(\n (\n  (1,2)\n  (3,4)\n )\n (\n  (5,6)\n  (7,8)\n )\n)');
    expect(tensorText([2.5], [], 'float32', format({}))).toBe('2.500');
    expect(tensorText([1, 0], [2], 'bool', format({}))).toBe('( true,false)');
    expect(tensorText([NaN, Infinity, -Infinity, 1], [4], 'float32', format({ digits: 2 }))).toBe('( nan, inf,-inf, 1.0)');
  });

  it('chooses scientific notation in auto mode for magnitudes outside [1e-4, 10^digits), and unaligned elements with digits 0', () => {
    expect(tensorText([12345, 0.5], [2], 'float32', format({ digits: 3 }))).toBe('(1.23e+04,5.00e-01)');
    expect(tensorText([0.00001, 1], [2], 'float32', format({ digits: 2 }))).toBe('(1.0e-05,1.0e+00)');
    expect(tensorText([0.1, 12.25], [2], 'float32', format({ digits: 0 }))).toBe('(0.1,12.25)');
    expect(tensorText([0.123456, 12.25], [2], 'float32', format({ floatFormat: 'none', digits: 3 }))).toBe('(0.123, 12.3)');
  });
});
