/**
 * `Options.logDir`: the directory an executor's log file goes to.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Options, getLogger, inferenceModel, ops } from 'poptfjs';

// The executor's own lines are the root module's, at INFO.
const root = getLogger();
const level = root.getLevel();
afterEach(() => root.setLevel(level));

/** Runs `fn` with stderr captured; returns what was written. */
async function stderrOf(fn: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return lines.join('');
}

describe('Options.logDir', () => {
  it('appends the lines an executor logs while it compiles and runs to <logDir>/poptfjs.log, creating the directory, and still writes them to stderr', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'poptfjs-logdir-')), 'logs', 'run1');
    root.setLevel('INFO');
    const executor = inferenceModel((x: tf.Tensor) => tf.mul(ops.ipuPrintTensor(x, 'x_in'), 2), {
      options: new Options().logDir(dir).modelName('doubler'),
    });
    const stderr = await stderrOf(async () => {
      await executor(tf.tensor1d([1.5, -2]));
    });
    const file = readFileSync(join(dir, 'poptfjs.log'), 'utf8');
    // The compile's line and the print made while the device ran, each once, in PopART's format.
    expect(file).toMatch(/^\S+Z poptfjs:poptfjs \d+\.\d+ I: compiled 'doubler' for inference/m);
    expect(file).toMatch(/poptfjs:op \d+\.\d+ I: x_in: \( 1\.500,-2\.000\)\n/);
    expect(
      file
        .split('\n')
        .filter(Boolean)
        .every((line) => stderr.includes(line)),
    ).toBe(true);
    executor.destroy();
  });

  it('keeps the lines of an executor without logDir out of the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-logdir-'));
    root.setLevel('INFO');
    const withDir = inferenceModel((x: tf.Tensor) => tf.add(x, 1), { options: new Options().logDir(dir).modelName('with_dir') });
    const without = inferenceModel((x: tf.Tensor) => tf.sub(x, 1), { options: new Options().modelName('without_dir') });
    await stderrOf(async () => {
      await Promise.all([withDir(tf.tensor1d([1])), without(tf.tensor1d([1]))]);
    });
    const file = readFileSync(join(dir, 'poptfjs.log'), 'utf8');
    expect(file).toContain("compiled 'with_dir'");
    expect(file).not.toContain('without_dir');
    withDir.destroy();
    without.destroy();
  });

  it('writes no log file when unset', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'poptfjs-logdir-cwd-'));
    const previous = process.cwd();
    process.chdir(cwd);
    try {
      root.setLevel('INFO');
      const executor = inferenceModel((x: tf.Tensor) => tf.neg(x));
      await stderrOf(async () => {
        await executor(tf.tensor1d([1]));
      });
      expect(existsSync(join(cwd, 'poptfjs.log'))).toBe(false);
      executor.destroy();
    } finally {
      process.chdir(previous);
    }
  });

  it('refuses a log directory that cannot be made, naming it, and the executor still compiles once it is fixed', async () => {
    const base = mkdtempSync(join(tmpdir(), 'poptfjs-logdir-'));
    writeFileSync(join(base, 'file'), 'not a directory');
    const executor = inferenceModel((x: tf.Tensor) => tf.add(x, 2), { options: new Options().logDir(join(base, 'file', 'logs')) });
    await expect(executor(tf.tensor1d([1]))).rejects.toThrow(`Options.logDir: cannot create the log directory ${join(base, 'file', 'logs')} (`);
    expect(executor.isCompiled()).toBe(false);
  });
});
