import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it, vi } from 'vitest';
import { DeviceManager, Engine, Executable, inferenceModel, ops } from 'poptfjs';

/** A text sink that keeps what is written. */
function sink(): { text: string; write(t: string): void } {
  return {
    text: '',
    write(t: string) {
      this.text += t;
    },
  };
}

/** What was written to stderr while `fn` ran. */
function stderrOf(fn: () => void): string {
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return chunks.join('');
}

describe('Engine: print streams', () => {
  it('prints ipuPrintTensor values to stderr by default, to the print stream once set, and to the print-tensor stream over it', async () => {
    const fn = (x: tf.Tensor) => tf.mul(ops.ipuPrintTensor(tf.add(x, 1), 'sum', { digits: 3 }), 2);
    const path = join(mkdtempSync(join(tmpdir(), 'poptfjs-print-')), 'print.poptfjs');
    const inference = inferenceModel(fn);
    await inference.compileAndExport(path, tf.zeros([2, 2]));
    inference.destroy();
    const engine = new Engine(Executable.fromFile(path));
    engine.load(new DeviceManager().createIpuModelDevice());
    engine.connectStream('input0', Float32Array.from([1, 2, 3, 4]));
    const output = new Float32Array(4);
    engine.connectStream('output0', output);
    const step = engine.programIndex('step');
    const printed = 'sum: (\n (2.00,3.00)\n (4.00,5.00)\n)\n';

    expect(stderrOf(() => engine.run(step))).toMatch(/poptfjs:op .*I: sum: \(\n \(2\.00,3\.00\)\n \(4\.00,5\.00\)\n\)\n$/);
    expect([...output]).toEqual([4, 6, 8, 10]);

    const print = sink();
    engine.setPrintStream(print);
    expect(stderrOf(() => engine.run(step))).toBe('');
    expect(print.text).toBe(printed);

    const tensors = sink();
    engine.setPrintTensorStream(tensors);
    engine.run(step);
    expect(tensors.text).toBe(printed);
    expect(print.text).toBe(printed);
  });
});
