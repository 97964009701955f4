/**
 * The import graph of the project's own TypeScript sources, and its cycles between files and between modules (the
 * folders of the data path).
 *
 * Imports are read with TypeScript's own pre-processor (static `import`/`export ... from`, `import type` and
 * dynamic `import()`), so a type-only import counts as much as a runtime one: a folder that needs another's types
 * depends on it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** One import cycle: the files or folders in import order, the first imported by the last. */
export type ImportCycle = readonly string[];

/** The import graph: each source file (relative to the root, with `/`) and the project files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** The folders whose sources make up the graph, relative to the project root. */
export const SOURCE_FOLDERS = ['lib', 'optim', 'ops', 'bin'] as const;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function resolveImport(fromFile: string, specifier: string, known: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => known.has(candidate));
}

/** Reads the import graph of the sources under `folders` of the project at `root`. */
export function readImportGraph(projectRoot: string, folders: readonly string[] = SOURCE_FOLDERS): ImportGraph {
  const root = resolve(projectRoot);
  const files = folders.flatMap((folder) => sourceFiles(join(root, folder)));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((imported) => resolveImport(file, imported.fileName, known))
      .filter((target): target is string => target !== undefined && target !== file)
      .map((target) => relative(root, target).split('\\').join('/'));
    graph.set(relative(root, file).split('\\').join('/'), [...new Set(targets)]);
  }
  return graph;
}

/**
 * The folder a source file belongs to as a module of the data path: `lib/<folder>` for a file anywhere under it
 * (a subfolder such as lib/runtime/worker_ipus is part of its module), `lib` for the package entry at its root, and
 * the top folder (optim, ops, bin) otherwise.
 */
export function moduleOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'lib' && parts.length > 2) return `lib/${parts[1]}`;
  return parts[0]!;
}

/** The same graph with each file replaced by its module (see {@link moduleOf}); imports within a module dropped. */
export function moduleGraph(graph: ImportGraph): ImportGraph {
  const modules = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = moduleOf(file);
    const edges = modules.get(from) ?? new Set<string>();
    modules.set(from, edges);
    for (const target of targets) if (moduleOf(target) !== from) edges.add(moduleOf(target));
  }
  return new Map([...modules].map(([module, edges]) => [module, [...edges]]));
}

/**
 * The cycles of a graph: one per strongly connected component of more than one node (Tarjan's algorithm), each
 * given as a shortest cycle through the component's first node so that the message names a concrete path.
 */
export function importCycles(graph: ImportGraph): ImportCycle[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => shortestCycle(graph, component));
}

function shortestCycle(graph: ImportGraph, component: readonly string[]): ImportCycle {
  const members = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return path;
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return component;
}
