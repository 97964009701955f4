/**
 * Functions a reader can hold in mind: no function, method or arrow function
 * of the compile path's folders has more than 60 lines of code (lines
 * holding code; blank lines and comments aside). Biome's cognitive-complexity
 * limit (biome.json) bounds how tangled a function is; this bounds how long.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../run_program.js';

/** The folders whose functions are held to the limit: the cost model, devices, compilation, backends, tracing, the executor, strategies. */
const FOLDERS = ['lib/ipu', 'lib/device', 'lib/compile', 'lib/backend', 'lib/trace', 'lib/executor', 'lib/strategy'];

/** The most lines of code a function may have. */
const MAX_LINES = 60;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The lines (0-based) on which the tokens of `node` lie: its lines of code, its comments left out. */
function codeLines(node: ts.Node, file: ts.SourceFile, lines: Set<number> = new Set()): Set<number> {
  const children = node.getChildren(file).filter((child) => !ts.isJSDoc(child));
  if (children.length === 0) {
    const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
    const last = file.getLineAndCharacterOfPosition(node.getEnd()).line;
    for (let line = first; line <= last; line++) lines.add(line);
    return lines;
  }
  for (const child of children) codeLines(child, file, lines);
  return lines;
}

/** The name a function is known by: its own, the variable or property it is assigned to, else where it starts. */
function functionName(fn: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  const named = fn.name ?? (fn.parent && (ts.isVariableDeclaration(fn.parent) || ts.isPropertyAssignment(fn.parent)) ? fn.parent.name : undefined);
  return named ? named.getText(file) : `function at line ${file.getLineAndCharacterOfPosition(fn.getStart(file)).line + 1}`;
}

/** Each function of `path` with its lines of code. */
function functionLengths(path: string): { name: string; lines: number }[] {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      found.push({ name: functionName(node as ts.FunctionLikeDeclaration, file), lines: codeLines(node, file).size });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('the functions of the compile path', () => {
  const lengths = FOLDERS.flatMap((folder) => sourceFiles(join(ROOT, folder))).flatMap((path) =>
    functionLengths(path).map((f) => ({ ...f, file: relative(ROOT, path).split('\\').join('/') })),
  );

  it('are measured in lines of code, a comment or a blank line not counted', () => {
    const file = ts.createSourceFile('f.ts', 'function f() {\n  // a comment\n\n  /** a doc */\n  const a = `x\n  y`;\n  return a;\n}\n', ts.ScriptTarget.Latest, true);
    const fn = file.statements[0]!;
    expect(codeLines(fn, file).size).toBe(5);
    expect(lengths.length).toBeGreaterThan(1000);
  });

  it(`have no more than ${MAX_LINES} lines of code each`, () => {
    const long = lengths.filter((f) => f.lines > MAX_LINES).map((f) => `${f.file}: ${f.name} (${f.lines} lines)`);
    expect(long).toEqual([]);
  });
});
