/**
 * The package works from outside the repository: `npm pack` makes the
 * tarball a user installs, it holds the built library, its types and the
 * command (no tests, benchmarks or examples), and installed into a fresh
 * project it runs README.md's quick start with a plain `import ... from
 * 'poptfjs'`, type-checks against its declarations, and answers
 * `npx poptfjs --version`. Dependencies come from npm's cache when they are
 * there (`--prefer-offline`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks } from '../docs/markdown_code.js';
import { ROOT } from '../run_program.js';

const work = mkdtempSync(join(tmpdir(), 'poptfjs-pack-'));
const project = join(work, 'project');
const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;

function run(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 600_000, env: { ...process.env, ...env } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

let packed: { filename: string; files: { path: string }[] };

beforeAll(() => {
  // npm pack runs `prepare` (the incremental build) first, so the tarball holds what the sources say.
  const pack = run('npm', ['pack', '--json', '--pack-destination', work], ROOT);
  expect(pack.status, pack.stderr).toBe(0);
  packed = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[')))[0];
  run('mkdir', ['-p', project], work);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-project', private: true, type: 'module' }, null, 2));
  const install = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, packed.filename)], project);
  expect(install.status, install.stderr).toBe(0);
}, 900_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed package', () => {
  it('holds the built library with its types and the command, and no tests, benchmarks, examples or scripts', () => {
    const files = packed.files.map((f) => f.path);
    for (const needed of ['package.json', 'README.md', 'dist/lib/index.js', 'dist/lib/index.d.ts', 'dist/bin/poptfjs.js', 'dist/optim/index.js', 'dist/ops/index.js']) {
      expect(files).toContain(needed);
    }
    expect(files.filter((f) => /^(test|bench|examples|scripts|dist\/(test|bench|examples|scripts))\//.test(f))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
  });

  it('installs without onnxruntime-node, which only the benchmarks use', () => {
    expect(existsSync(join(project, 'node_modules', 'poptfjs', 'package.json'))).toBe(true);
    expect(existsSync(join(project, 'node_modules', 'onnxruntime-node'))).toBe(false);
  });

  it("runs README.md's quick start from the user's project, each snippet as a file of its own", () => {
    const snippets = codeBlocks('README.md').filter((b) => b.language === 'js');
    expect(snippets.length).toBeGreaterThanOrEqual(5);
    for (const [i, snippet] of snippets.entries()) {
      const file = `quick-start-${i}.mjs`;
      writeFileSync(join(project, file), snippet.code);
      const result = run(process.execPath, [file], project, { POPTFJS_IPU_LOCK_DIR: mkdtempSync(join(tmpdir(), 'poptfjs-pack-ipus-')) });
      expect(result.stderr, `README.md:${snippet.line}`).toBe('');
      expect(result.status, `README.md:${snippet.line}: ${result.stdout}`).toBe(0);
      expect(result.stdout.length, `README.md:${snippet.line} prints what it did`).toBeGreaterThan(0);
    }
  }, 900_000);

  it('type-checks a TypeScript program against its declarations', () => {
    writeFileSync(
      join(project, 'check.ts'),
      [
        "import { Options, inferenceModel, tf, type InferenceExecutor } from 'poptfjs';",
        'const options: Options = new Options().deviceIterations(2);',
        'const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [2] })] });',
        'const executor: InferenceExecutor = inferenceModel(model, { options });',
        'export const compiled: Promise<void> = executor.compile(tf.ones([2, 2]));',
        '',
      ].join('\n'),
    );
    const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', 'check.ts'];
    const result = run(process.execPath, [tsc, ...args], project);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('gives the poptfjs command', () => {
    const result = run('npx', ['--no-install', 'poptfjs', '--version'], project);
    expect(result).toMatchObject({ status: 0, stdout: `${version}\n` });
  });
});
