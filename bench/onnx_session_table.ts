/**
 * The ONNX session table: torchvision's resnet18, mobilenet_v2 and
 * squeezenet1_1 and a torch.nn.TransformerEncoder, exported by
 * `torch.onnx.export` (bench/session_models.py, run with Debian's python
 * when the files are missing), each run by a poptfjs `InferenceSession` and
 * by onnxruntime-node on the same file and input, taking turns within each
 * round. onnxruntime runs with its thread pool's spin-waiting off: its
 * spinning threads keep every core busy after a run and slow down whatever
 * runs next in the process (poptfjs's turn, about threefold on 2 cores);
 * its default, spinning, is then timed alone. Per model: the median run of
 * each, the ratios, and the largest difference between the outputs.
 * Beside it, in the same rounds, poptfjs runs with its
 * `MultiplyAddConvolution` pattern off (its convolutions on XNNPACK, without
 * fused multiply-adds), after an onnxruntime run of its own, so that both
 * poptfjs sessions start from what onnxruntime left in the caches, and
 * neither is measured in a later stretch of time than the other. Last, the FLOPs of each model's
 * convolutions and products, and the least time they take at WebAssembly's
 * fused multiply-add peak (bench/product_flops.ts): the bound on any wasm
 * run of the model.
 * Targets: poptfjs ≤ 3× onnxruntime on every model, ≤ 1.5× on at least one.
 *
 * poptfjs does not depend on onnxruntime-node: `npm run bench` installs it
 * into bench/node_modules (bench/package.json), and the table loads it from
 * there; its API is onnxruntime-common's (a devDependency, for the types).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { getThreadsCount } from '@tensorflow/tfjs-backend-wasm';
import type * as Ort from 'onnxruntime-common';
import { popart } from 'poptfjs';
import { benchDirectory } from './bench_directory.js';
import { fusedMultiplyAddPeak, productFlops } from './product_flops.js';
import { runSideBySide } from './side_by_side.js';

/** The title of the table, as `BENCH_ONLY` matches it. */
export const SESSION_TABLE_TITLE = 'ONNX sessions against onnxruntime-node';

/** A model of the table: its file's name and input shape (as bench/session_models.py exports it). */
interface SessionModel {
  readonly name: string;
  readonly input: readonly number[];
}

const MODELS: readonly SessionModel[] = [
  { name: 'resnet18', input: [1, 3, 64, 64] },
  { name: 'mobilenet_v2', input: [1, 3, 224, 224] },
  { name: 'squeezenet1_1', input: [1, 3, 224, 224] },
  { name: 'transformer_encoder', input: [1, 64, 256] },
];

/** What was measured for a model, or why not. */
export interface SessionRow {
  readonly model: SessionModel;
  readonly result:
    | {
        readonly poptfjsMs: number;
        readonly separateMs: number;
        readonly onnxruntimeMs: number;
        readonly spinningMs: number;
        readonly maxAbsDiff: number;
        /** GFLOP of the convolutions and matrix products of one poptfjs run. */
        readonly gflop: number;
      }
    | { readonly failed: string };
}

/** WebAssembly's fused multiply-add peak on this machine ({@link fusedMultiplyAddPeak}) and the wasm backend's threads. */
interface MultiplyAddPeak {
  readonly gflopsPerThread: number;
  readonly threads: number;
}

/** The measured table, or why it could not be measured. */
export type SessionTable = { readonly rows: readonly SessionRow[]; readonly onnxruntime: string; readonly peak: MultiplyAddPeak | undefined } | { readonly skipped: string };

const PYTHON = process.env.POPTFJS_BENCH_PYTHON ?? '/usr/bin/python3';

/**
 * Untimed rounds first: the sessions' first runs allocate their tensors, and compiling both sessions leaves garbage to
 * collect. After 10, the first side-by-side rounds still ran resnet18 0.2-1.3 ms slower than the same graph in the
 * second (6.2 against 5.6, 7.3 against 6.0 ms); after 40, within 0.3 ms.
 */
const WARMUP_ROUNDS = 40;

/** Where the exported models are kept (generated, never committed). */
function modelDirectory(): string {
  return join(benchDirectory(), '..', 'node_modules', '.cache', 'poptfjs-bench-session-models');
}

/** Exports the models whose files are missing; the reason when that fails. */
function exportMissing(directory: string): string | undefined {
  const missing = MODELS.filter((m) => !existsSync(join(directory, `${m.name}.onnx`)) || !existsSync(join(directory, `${m.name}_input.bin`)));
  if (missing.length === 0) return undefined;
  if (!existsSync(PYTHON)) return `${PYTHON} not found (set POPTFJS_BENCH_PYTHON to a Python with torch and torchvision)`;
  mkdirSync(directory, { recursive: true });
  const run = spawnSync(PYTHON, [join(benchDirectory(), 'session_models.py'), directory, ...missing.map((m) => m.name)], { encoding: 'utf8' });
  if (run.status !== 0) return `bench/session_models.py failed: ${(run.stderr || run.error?.message || '').trim().split('\n').pop()}`;
  return undefined;
}

/** A prepared poptfjs session of `file` with the Default patterns, `MultiplyAddConvolution` switched off if not `fused`. */
async function poptfjsSession(file: string, fused: boolean): Promise<popart.InferenceSession> {
  const session = await popart.InferenceSession.create({
    model: file,
    dataFlow: new popart.DataFlow(1, { output: popart.AnchorReturnType('All') }),
    deviceInfo: new popart.DeviceManager().createCpuDevice(),
    patterns: new popart.Patterns('Default').enablePattern('MultiplyAddConvolution', fused),
  });
  try {
    await session.prepareDevice();
    return session;
  } catch (error) {
    session.dispose();
    throw error;
  }
}

async function measure(model: SessionModel, directory: string, ort: typeof Ort, rounds: number): Promise<SessionRow['result']> {
  const file = join(directory, `${model.name}.onnx`);
  const bytes = readFileSync(join(directory, `${model.name}_input.bin`));
  const input = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const session = await poptfjsSession(file, true);
  const separate = await poptfjsSession(file, false);
  try {
    const anchors = session.initAnchorArrays();
    const separateAnchors = separate.initAnchorArrays();
    const noSpinning = { extra: { session: { 'intra_op.allow_spinning': '0', 'inter_op.allow_spinning': '0' } } };
    const reference = await ort.InferenceSession.create(file, noSpinning);
    const feeds = { input: new ort.Tensor('float32', input, [...model.input]) };
    let expected: Float32Array | undefined;
    const onnxruntimeCase = { name: 'onnxruntime-node', step: async () => void (expected = (await reference.run(feeds)).output!.data as Float32Array) };
    const [onnxruntime, poptfjs, , withoutFused] = await runSideBySide(
      [
        onnxruntimeCase,
        { name: 'poptfjs', step: () => session.run(new popart.StepIO({ input }, anchors)) },
        { ...onnxruntimeCase, name: 'onnxruntime-node, before the session without MultiplyAddConvolution' },
        { name: 'poptfjs without MultiplyAddConvolution', step: () => separate.run(new popart.StepIO({ input }, separateAnchors)) },
      ],
      rounds,
      WARMUP_ROUNDS,
    );
    await reference.release();
    const actual = anchors.output as Float32Array;
    const maxAbsDiff = actual.reduce((m, v, i) => Math.max(m, Math.abs(v - expected![i]!)), 0);
    const gflop = (await productFlops(() => session.run(new popart.StepIO({ input }, anchors)))) / 1e9;
    const spinning = await ort.InferenceSession.create(file);
    const [alone] = await runSideBySide([{ name: 'onnxruntime-node, spinning', step: async () => void (await spinning.run(feeds)) }], rounds);
    await spinning.release();
    return { poptfjsMs: poptfjs!.medianMs, separateMs: withoutFused!.medianMs, onnxruntimeMs: onnxruntime!.medianMs, spinningMs: alone!.medianMs, maxAbsDiff, gflop };
  } finally {
    session.dispose();
    separate.dispose();
  }
}

/** Measures every model (`rounds` timed rounds each), or says why the table cannot be made here. */
export async function sessionTable(rounds: number): Promise<SessionTable> {
  const bench = createRequire(join(benchDirectory(), 'package.json'));
  let ort: typeof Ort;
  try {
    ort = bench('onnxruntime-node') as typeof Ort;
  } catch (error) {
    return {
      skipped: `onnxruntime-node cannot be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); npm run bench installs it into bench/node_modules`,
    };
  }
  const directory = modelDirectory();
  const exportFailure = exportMissing(directory);
  if (exportFailure) return { skipped: exportFailure };
  const rows: SessionRow[] = [];
  for (const model of MODELS) {
    try {
      rows.push({ model, result: await measure(model, directory, ort, rounds) });
    } catch (error) {
      rows.push({ model, result: { failed: error instanceof Error ? error.message.split('\n')[0]! : String(error) } });
    }
  }
  const version = (bench('onnxruntime-node/package.json') as { version: string }).version;
  const perThread = fusedMultiplyAddPeak();
  return { rows, onnxruntime: version, peak: perThread === undefined ? undefined : { gflopsPerThread: perThread, threads: getThreadsCount() } };
}

const HEADERS = [
  'model',
  'input',
  'poptfjs ms',
  'poptfjs without MultiplyAddConvolution ms',
  'onnxruntime-node ms',
  'ratio',
  'onnxruntime-node spinning, alone, ms',
  'ratio to it',
  'max abs diff',
  'GFLOP of its convolutions and products',
  'ms at the multiply-add peak',
];

function cells(row: SessionRow, peak: MultiplyAddPeak | undefined): string[] {
  const head = [row.model.name, row.model.input.join('×')];
  const r = row.result;
  if ('failed' in r) return [...head, `failed: ${r.failed}`, ...new Array<string>(HEADERS.length - 3).fill('')];
  const ratio = (ms: number) => (r.poptfjsMs / ms).toFixed(2);
  return [
    ...head,
    r.poptfjsMs.toFixed(2),
    r.separateMs.toFixed(2),
    r.onnxruntimeMs.toFixed(2),
    ratio(r.onnxruntimeMs),
    r.spinningMs.toFixed(2),
    ratio(r.spinningMs),
    r.maxAbsDiff.toExponential(1),
    r.gflop.toFixed(3),
    peak === undefined ? 'n/a' : peakMs(r.gflop, peak).toFixed(2),
  ];
}

/** The least time `gflop` takes at `peak` on all its threads. */
function peakMs(gflop: number, peak: MultiplyAddPeak): number {
  return (gflop / (peak.gflopsPerThread * peak.threads)) * 1e3;
}

/**
 * The line on the bound: WebAssembly's peak, and the models whose convolutions and products alone, at that peak on
 * every thread, take longer than 1.5 times onnxruntime's side-by-side run.
 */
function peakBound(rows: readonly SessionRow[], peak: MultiplyAddPeak | undefined): string {
  if (peak === undefined) return 'WebAssembly fused multiply-add peak: not measured (no relaxed SIMD here)';
  const beyond = rows.filter((r) => !('failed' in r.result) && peakMs(r.result.gflop, peak) > 1.5 * r.result.onnxruntimeMs).map((r) => r.model.name);
  return (
    `WebAssembly fused multiply-add peak (f32x4.relaxed_madd alone): ${peak.gflopsPerThread.toFixed(1)} GFLOP/s a thread, ${peak.threads} thread(s); ` +
    `at it, the convolutions and products alone take longer than 1.5 × onnxruntime's side-by-side run on ${beyond.length} of ${rows.length} models${beyond.length > 0 ? ` (${beyond.join(', ')})` : ''}`
  );
}

/** The line against the targets, for the ratios to onnxruntime side by side and to its spinning default alone. */
function verdict(rows: readonly SessionRow[]): string {
  const against = (key: 'onnxruntimeMs' | 'spinningMs', what: string) => {
    const ratios = rows.map((r) => ('failed' in r.result ? Number.POSITIVE_INFINITY : r.result.poptfjsMs / r.result[key]));
    const [worst, best] = [Math.max(...ratios), Math.min(...ratios)];
    return `${what}: worst ratio ${worst.toFixed(2)} (target ≤ 3 on every model: ${worst <= 3 ? 'met' : 'not met'}), best ${best.toFixed(2)} (target ≤ 1.5 on one: ${best <= 1.5 ? 'met' : 'not met'})`;
  };
  return `${against('onnxruntimeMs', 'side by side')}; ${against('spinningMs', 'to its spinning default alone')}`;
}

/** The table as text, for the console. */
export function sessionTableText(table: SessionTable): string {
  if ('skipped' in table) return `${SESSION_TABLE_TITLE}: skipped: ${table.skipped}`;
  const rows = [HEADERS, ...table.rows.map((r) => cells(r, table.peak))];
  const widths = HEADERS.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return [
    `${SESSION_TABLE_TITLE} ${table.onnxruntime} (median run, ms):`,
    ...rows.map((r) => `  ${r.map((cell, c) => cell.padStart(widths[c]!)).join('  ')}`),
    verdict(table.rows),
    peakBound(table.rows, table.peak),
  ].join('\n');
}

/** The table as a Markdown section, for bench/RESULTS.md. */
export function sessionTableMarkdown(table: SessionTable): string {
  if ('skipped' in table) return `## ${SESSION_TABLE_TITLE}\n\nSkipped: ${table.skipped}`;
  return [
    `## ${SESSION_TABLE_TITLE}`,
    '',
    `Each model is exported by \`torch.onnx.export\` (bench/session_models.py: random weights, opset 14) and run on the same`,
    `input by a poptfjs \`InferenceSession\` (tfjs wasm backend, CPU device) and by onnxruntime-node ${table.onnxruntime} (CPU, its`,
    `thread pool's spin-waiting off), the two taking turns within each round after ${WARMUP_ROUNDS} untimed rounds; then, in rounds of their own, onnxruntime and`,
    'poptfjs with its `MultiplyAddConvolution` pattern off (its convolutions on XNNPACK). "max abs diff" compares the outputs of',
    'poptfjs and onnxruntime. With',
    "spin-waiting on (its default), onnxruntime's threads keep both cores busy after each of its runs, which slows whatever runs",
    "next in the process, poptfjs's turn included, about threefold; so its default is timed alone, after the side-by-side rounds.",
    'The last two columns: the FLOPs of the convolution and matrix-product kernels of one poptfjs run (2 per multiply-add,',
    "taps in the padding included), and the least time they take at WebAssembly's fused multiply-add peak on every thread",
    '(a loop of `f32x4.relaxed_madd`s alone, measured here): no WebAssembly kernel computes them faster.',
    '',
    `| ${HEADERS.join(' | ')} |`,
    `|---|---|${HEADERS.slice(2)
      .map(() => '---:')
      .join('|')}|`,
    ...table.rows.map((r) => `| ${cells(r, table.peak).join(' | ')} |`),
    '',
    verdict(table.rows),
    '',
    peakBound(table.rows, table.peak),
  ].join('\n');
}
