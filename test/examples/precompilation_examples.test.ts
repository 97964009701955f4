import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-examples-'));
const file = join(dir, 'precompiled.poptfjs');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(example: string, args: string[] = [], env: Record<string, string> = {}): string {
  const { status, stdout, stderr } = runProgram(`examples/${example}.ts`, args, env);
  expect(stderr).toBe('');
  expect(status).toBe(0);
  return stdout;
}

describe('precompilation examples (the seed snippets) and checkpoints', () => {
  it('precompile-export.ts: compileAndExport for an offline target, then precompile-load.ts: load() and train in another process', () => {
    expect(run('precompile-export', [file])).toMatch(/^exported the training executable of 'sequential_1' with its model to .*precompiled\.poptfjs \(\d+ bytes\)$/m);
    const out = run('precompile-load', [file]);
    const losses = [...out.matchAll(/^(\d+): loss ([\d.]+)$/gm)].map((m) => Number(m[2]));
    expect(losses).toHaveLength(6);
    expect(losses.at(-1)!).toBeLessThan(losses[0]! / 5);
    expect(out).toContain('compiled 0 time(s) in this process');
    expect(out).toMatch(/the restored model 'sequential_1' has 2 weights; its own loss on the sample is [\d.]+/);
  });

  it('precompile-load-ipu.ts: editOpts chooses IPU 1', () => {
    expect(run('precompile-load-ipu', [file], { POPTFJS_WAIT_FOR_IPU: '1' })).toMatch(/^ran on device 1 \(IPUs 1\): loss [\d.]+$/m);
  });

  it('precompile-load-executable.ts: exportModel false, re-create the model, loadExecutable; a different model is refused', () => {
    const out = run('precompile-load-executable');
    expect(out).toMatch(/^loaded the executable without compiling \(compiled 0 time\(s\)\); loss [\d.]+$/m);
    expect(out).toMatch(/a different model is refused: .*executable\.poptfjs does not match the wrapped model: the file has 2 parameter\(s\), the model 1/);
  });

  it('precompile-exported-pair.ts: exported separately, the models need explicit copies', () => {
    const out = run('precompile-exported-pair');
    const epochs = [...out.matchAll(/^epoch (\d): validation loss ([\d.]+) before the copy, ([\d.]+) after it$/gm)];
    expect(epochs).toHaveLength(3);
    for (const [, , before, after] of epochs) expect(Number(after)).toBeLessThan(Number(before));
  });

  it('precompile-reconnected-pair.ts: inferenceModel(training) + loadExecutable keeps them in sync', () => {
    const out = run('precompile-reconnected-pair');
    expect([...out.matchAll(/; validation sees the trained weights$/gm)]).toHaveLength(3);
  });

  it('checkpoint-resume.ts: a fresh model resumed from a checkpoint at step 3 reproduces the uninterrupted run', () => {
    const out = run('checkpoint-resume');
    expect(out).toMatch(/^identical: true$/m);
  });
});
