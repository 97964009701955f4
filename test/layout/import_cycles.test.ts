import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, moduleGraph, readImportGraph } from '../../scripts/import_graph.js';

/** The folders of the data path, lowest first (docs/architecture.md): each imports only from those before it. */
const DATA_PATH = [
  'lib/common',
  'lib/option_vocabulary',
  'lib/backend',
  'lib/ir',
  'lib/trace',
  'lib/precision',
  'lib/strategy',
  'lib/ipu',
  'lib/options',
  'optim',
  'lib/proto',
  'lib/executable',
  'lib/host_memory',
  'lib/runtime',
  'lib/files',
  'lib/onnx',
  'lib/device',
  'lib/report',
  'lib/distributed',
  'lib/compile',
  'lib/engine',
  'lib/executor',
  'ops',
  'lib/session',
  'lib/planner',
  'lib/data',
  'lib',
  'bin',
];

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the import graph of lib, optim, ops and bin', () => {
  const graph = readImportGraph(ROOT);

  it('reads the imports of every source file', () => {
    expect(graph.get('lib/runtime/graph_interpreter.ts')).toContain('lib/ir/graph.ts');
    expect(graph.get('lib/index.ts')?.length).toBeGreaterThan(20);
  });

  it('has no cycle between files', () => {
    expect(importCycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('has no cycle between the folders of the data path', () => {
    expect(importCycles(moduleGraph(graph)).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('has each folder import only from the folders before it in the data path', () => {
    const modules = moduleGraph(graph);
    expect([...modules.keys()].sort()).toEqual([...DATA_PATH].sort());
    const upward = [...modules].flatMap(([module, imported]) =>
      imported.filter((target) => DATA_PATH.indexOf(target) > DATA_PATH.indexOf(module)).map((target) => `${module} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });
});

/** The front-ends (PopTorch's executors, PopART's session), which run their models through the engine layer only. */
const FRONT_ENDS = ['lib/executor', 'lib/session'];

describe('the engine layer', () => {
  const modules = moduleGraph(readImportGraph(ROOT));

  it('is what the front-ends compile and run through: they import lib/compile and lib/engine, never lib/runtime', () => {
    for (const front of FRONT_ENDS) {
      expect(modules.get(front), front).toEqual(expect.arrayContaining(['lib/compile', 'lib/engine']));
      expect(modules.get(front), front).not.toContain('lib/runtime');
    }
  });

  it('keeps the two front-ends apart: lib/session imports nothing of lib/executor', () => {
    expect(modules.get('lib/session')).not.toContain('lib/executor');
  });
});

describe('importCycles', () => {
  it('finds a cycle through each strongly connected group, and none in a graph without one', () => {
    const cyclic = new Map([
      ['a', ['b']],
      ['b', ['c', 'd']],
      ['c', ['a']],
      ['d', []],
      ['e', ['f']],
      ['f', ['e']],
    ]);
    expect(importCycles(cyclic)).toEqual([
      ['a', 'b', 'c'],
      ['e', 'f'],
    ]);
    expect(
      importCycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
  });
});
