/**
 * Everything a user can set is documented: every method of `Options` and its
 * groups, every field of PopART's `SessionOptions`, every engine and runtime
 * option of Poplar's (with what it does here), every flag of every verb
 * of the command line (docs/cli.md holds each verb's `--help` as printed),
 * every environment variable the code reads; and every link between the
 * pages points at a page, a heading or a file that exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Options, TensorLocationSettings, popart } from 'poptfjs';
import { verbHelp } from '../../bin/cli_arguments.js';
import { VERBS } from '../../bin/verbs.js';
import { ENGINE_OPTIONS } from '../../lib/options/engine_option_table.js';
import { RUNTIME_OPTIONS } from '../../lib/options/runtime_options.js';
import { ROOT } from '../run_program.js';
import { markdownPages } from './markdown_code.js';

const pages = markdownPages();
const text = (page: string) => readFileSync(join(ROOT, page), 'utf8');
const allDocs = pages.map(text).join('\n');

/** The methods a user calls on an object: its prototype's functions, less the constructor and what only poptfjs calls. */
function methods(object: object): string[] {
  const proto = Object.getPrototypeOf(object) as object;
  return Object.getOwnPropertyNames(proto).filter(
    (name) => name !== 'constructor' && name !== 'restore' && typeof Object.getOwnPropertyDescriptor(proto, name)?.value === 'function',
  );
}

/** The source files of the package (lib, optim, ops, bin), relative to the root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Variables the code reads that belong to the system, not to poptfjs. */
const SYSTEM_VARIABLES = new Set(['PATH']);

describe('the docs', () => {
  it('document every method of Options, of its groups and of TensorLocationSettings', () => {
    const options = new Options();
    const groups: Record<string, object> = {
      Options: options,
      Training: options.Training,
      Precision: options.Precision,
      TensorLocations: options.TensorLocations,
      Distributed: options.Distributed,
      Jit: options.Jit,
      TensorLocationSettings: new TensorLocationSettings(),
    };
    const missing = Object.entries(groups).flatMap(([group, object]) =>
      methods(object)
        .filter((name) => !new RegExp(`[.\`]${name}\\(`).test(allDocs))
        .map((name) => `${group}.${name}`),
    );
    if (!/Options\.fromJSON\(/.test(allDocs)) missing.push('Options.fromJSON');
    expect(missing).toEqual([]);
  });

  it("document every field of PopART's SessionOptions", () => {
    const page = text('docs/onnx-and-sessions.md');
    expect(Object.keys(new popart.SessionOptions()).filter((field) => !page.includes(`\`${field}\``))).toEqual([]);
  });

  it('document every engine and runtime option in a row of docs/engine.md that says what it does on the simulated engine, or why it is recorded only', () => {
    const rows = text('docs/engine.md')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    const says = (name: string, what: string) => rows.some((line) => line.startsWith(`| \`${name}\` |`) && line.includes(what));
    const engine = Object.entries(ENGINE_OPTIONS).filter(([name, spec]) => !says(name, spec.acts ?? `recorded: ${spec.recorded}`));
    const runtime = Object.entries(RUNTIME_OPTIONS).filter(([name, spec]) => !says(name, spec.effect));
    expect([...engine, ...runtime].map(([name]) => name)).toEqual([]);
  });

  it('hold the --help of every verb of the command line as it prints, so every flag is documented', () => {
    const page = text('docs/cli.md');
    expect(VERBS.filter((verb) => !page.includes(verbHelp(verb))).map((v) => v.name)).toEqual([]);
    const flags = VERBS.flatMap((verb) => verb.flags.map((f) => `--${f.name}`));
    expect(flags.filter((flag) => !page.includes(flag))).toEqual([]);
  });

  it('document every environment variable the code reads', () => {
    const read = new Set<string>();
    for (const file of ['lib', 'optim', 'ops', 'bin'].flatMap(sourceFiles)) {
      const source = readFileSync(join(ROOT, file), 'utf8');
      // `env.NAME`, `env['NAME']`, and the names of poptfjs's and Graphcore's variables in quotes.
      for (const m of source.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])|['"]((?:POPTFJS|POPTORCH|POPART|POPLAR|POPDIST)_[A-Z0-9_]+)['"]/g)) {
        read.add((m[1] ?? m[2] ?? m[3])!);
      }
    }
    expect(read.size).toBeGreaterThan(20);
    const page = text('docs/environment.md');
    expect([...read].filter((name) => !SYSTEM_VARIABLES.has(name) && !page.includes(`\`${name}\``)).sort()).toEqual([]);
  });

  it('link only to pages, headings and files that exist', () => {
    const anchor = (heading: string) =>
      heading
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replaceAll(' ', '-');
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of text(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, fragment] = target!.split('#') as [string, string | undefined];
        const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), path);
        if (!existsSync(file)) broken.push(`${page}: ${target}`);
        else if (fragment !== undefined) {
          const headings = [...readFileSync(file, 'utf8').matchAll(/^#+ (.+)$/gm)].map((h) => anchor(h[1]!));
          if (!headings.includes(fragment)) broken.push(`${page}: ${target} (no heading '${fragment}' in ${relative(ROOT, file)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
