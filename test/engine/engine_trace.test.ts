import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeviceManager, Engine, Executable } from 'poptfjs';
import { exportedRegressor } from './engine_fixtures.js';

/** One edge of a traced kernel: a value it read (`before`) or made (`after`). */
interface TracedEdge {
  when: 'before' | 'after';
  shape: number[];
  values: number[];
}

/** One traced compute set: its name and its kernels (`#<node> <kernel> (<layer>)`) with their edges. */
interface TracedComputeSet {
  name: string;
  kernels: Array<{ kernel: string; edges: TracedEdge[] }>;
}

/** The compute sets of a trace, read back from its text. */
function parseTrace(text: string): TracedComputeSet[] {
  const sets: TracedComputeSet[] = [];
  let last: TracedEdge | undefined;
  for (const line of text.split('\n')) {
    const set = /^compute set (.+)$/.exec(line);
    const kernel = /^ {2}#\d+ (.+)$/.exec(line);
    const edge = /^ {4}(before|after) %\d+ float32\[([\d,]*)\]: (.*)$/.exec(line);
    if (set) sets.push({ name: set[1]!, kernels: [] });
    if (kernel) sets.at(-1)!.kernels.push({ kernel: kernel[1]!, edges: [] });
    if (set || kernel) last = undefined;
    if (edge) {
      last = { when: edge[1] as 'before' | 'after', shape: edge[2] ? edge[2].split(',').map(Number) : [], values: [] };
      sets.at(-1)!.kernels.at(-1)!.edges.push(last);
    }
    // The values: the rest of the edge line and its continuation lines.
    const values = edge ? edge[3]! : line;
    if (last) last.values.push(...(values.match(/-?\d+(\.\d+)?(e[+-]\d+)?/g) ?? []).map(Number));
  }
  return sets;
}

/** The values kernels of `set` (those of kind `kernel`, if given) made with shape `shape`, in order. */
function made(set: TracedComputeSet, shape: number[], kernel?: string): number[][] {
  return set.kernels
    .filter((k) => kernel === undefined || k.kernel.split(' ')[0] === kernel)
    .flatMap((k) => k.edges.filter((e) => e.when === 'after' && e.shape.join(',') === shape.join(',')).map((e) => e.values));
}

/** Row-major `rows` × `cols` values `v(i)`, small and exact in float32. */
const filled = (n: number, v: (i: number) => number) => Float32Array.from({ length: n }, (_, i) => v(i));

/** The regressor's step by hand: h = tanh(x W1 + b1), out = h W2 + b2, loss = mean((out - y)²), and the gradients of W2 and b2. */
function handStep(x: Float32Array, y: Float32Array, w1: Float32Array, b1: Float32Array, w2: Float32Array, b2: Float32Array) {
  const batch = 2;
  const h: number[] = [];
  const out: number[] = [];
  for (let r = 0; r < batch; r++) {
    for (let j = 0; j < 6; j++) {
      let s = b1[j]!;
      for (let k = 0; k < 5; k++) s += x[r * 5 + k]! * w1[k * 6 + j]!;
      h.push(Math.tanh(s));
    }
    for (let j = 0; j < 3; j++) {
      let s = b2[j]!;
      for (let k = 0; k < 6; k++) s += h[r * 6 + k]! * w2[k * 3 + j]!;
      out.push(s);
    }
  }
  const dOut = out.map((o, i) => (2 * (o - y[i]!)) / out.length);
  const loss = out.reduce((sum, o, i) => sum + (o - y[i]!) ** 2, 0) / out.length;
  const dW2: number[] = [];
  for (let k = 0; k < 6; k++) for (let j = 0; j < 3; j++) dW2.push(h[k]! * dOut[j]! + h[6 + k]! * dOut[3 + j]!);
  const dB2 = [0, 1, 2].map((j) => dOut[j]! + dOut[3 + j]!);
  return { h, loss, dW2, dB2 };
}

function expectClose(actual: readonly number[] | undefined, expected: readonly number[]): void {
  expect(actual).toHaveLength(expected.length);
  actual!.forEach((a, i) => expect(a).toBeCloseTo(expected[i]!, 6));
}

describe('Engine option debug.trace', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** An engine of the 5 → 6 → 3 regressor (host batch 2) with `options`, loaded with known weights and streams; runs its step `steps` times. */
  async function tracedRun(options: Record<string, string>, steps: number) {
    const { path, weightNames } = await exportedRegressor(70, 2);
    const engine = new Engine(Executable.fromFile(path), options);
    engine.load(new DeviceManager().createIpuModelDevice());
    const [w1Name, b1Name, w2Name, b2Name] = weightNames as [string, string, string, string];
    const w1 = filled(30, (i) => ((i * 7) % 11) / 10 - 0.5);
    const b1 = filled(6, (i) => i / 20 - 0.1);
    const w2 = filled(18, (i) => ((i * 5) % 7) / 10 - 0.3);
    const b2 = filled(3, (i) => 0.25 * i);
    engine.writeTensor(w1Name, w1);
    engine.writeTensor(b1Name, b1);
    engine.writeTensor(w2Name, w2);
    engine.writeTensor(b2Name, b2);
    const x = filled(10, (i) => i / 8 - 0.5);
    const y = filled(6, (i) => 1 - i / 4);
    engine.connectStream('input0', x);
    engine.connectStream('input1', y);
    engine.connectStream('output0', new Float32Array(6));
    const loss = new Float32Array(1);
    engine.connectStream('loss', loss);
    for (let i = 0; i < steps; i++) engine.run(engine.programIndex('step'));
    const trained = new Float32Array(18);
    engine.readTensor(w2Name, trained);
    engine.destroy();
    return { hand: handStep(x, y, w1, b1, w2, b2), loss: loss[0]!, trained };
  }

  it('writes each compute set and the values each kernel read and made to debug.traceFile, equal to the step computed by hand', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-trace-')), 'trace.txt');
    const { hand } = await tracedRun({ 'debug.trace': 'true', 'debug.traceFile': file }, 1);
    const sets = parseTrace(readFileSync(file, 'utf8'));
    expect(sets.map((s) => s.name)).toEqual(['F0:0 (IPU 0, replica 0)', 'B0:0 (IPU 0, replica 0)']);
    const [forward, backward] = sets as [TracedComputeSet, TracedComputeSet];
    expectClose(made(forward, [2, 6], 'Tanh')[0], hand.h);
    expectClose(made(forward, []).at(-1), [hand.loss]);
    // Each kernel's inputs are the values an earlier kernel made (or the step's inputs and weights).
    const tanh = forward.kernels.find((k) => k.kernel.startsWith('Tanh '))!;
    expect(made(forward, [2, 6], 'Add')[0]).toEqual(tanh.edges[0]!.values);
    expectClose(made(backward, [6, 3])[0], hand.dW2);
    expectClose(made(backward, [3])[0], hand.dB2);
  });

  it('the trace file holds every run since the engine was loaded; tracing changes no number', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-trace-')), 'trace.txt');
    const traced = await tracedRun({ 'debug.trace': 'true', 'debug.traceFile': file }, 3);
    expect(parseTrace(readFileSync(file, 'utf8')).map((s) => s.name.split(' ')[0])).toEqual(['F0:0', 'B0:0', 'F0:0', 'B0:0', 'F0:0', 'B0:0']);
    const untraced = await tracedRun({}, 3);
    expect(traced.loss).toBe(untraced.loss);
    expect(traced.trained).toEqual(untraced.trained);
  });

  it('goes to the error stream without debug.traceFile, and nowhere without debug.trace', async () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
      written.push(String(text));
      return true;
    });
    const { hand } = await tracedRun({ 'debug.trace': 'true' }, 1);
    const [forward] = parseTrace(written.join('')) as [TracedComputeSet];
    expect(forward.name).toBe('F0:0 (IPU 0, replica 0)');
    expectClose(made(forward, [2, 6], 'Tanh')[0], hand.h);
    written.length = 0;
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-trace-')), 'trace.txt');
    await tracedRun({ 'debug.traceFile': file }, 1);
    expect(written.join('')).not.toContain('compute set');
    expect(existsSync(file)).toBe(false);
  });
});
