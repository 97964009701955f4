/**
 * The `ops` namespace follows from the files of ops/: each file directly in
 * ops/ is an op whose exports are public, and ops/index.ts, written from them
 * by scripts/ops_index.mjs, exports those and nothing else.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ops } from 'poptfjs';
import { opFiles, opsIndexText } from '../../scripts/ops_index.mjs';
import { ROOT } from '../run_program.js';

describe('the ops namespace', () => {
  it('is ops/index.ts as scripts/ops_index.mjs writes it from the files of ops/ now', () => {
    expect(readFileSync(join(ROOT, 'ops', 'index.ts'), 'utf8')).toBe(opsIndexText(ROOT));
    expect(opFiles(ROOT)).toContain('nop.ts');
    expect(opFiles(ROOT)).not.toContain('index.ts');
  });

  it("holds every export of every op file, the same object, and nothing that is no op file's", async () => {
    const fromFiles = new Map<string, unknown>();
    for (const file of opFiles(ROOT)) {
      const module = (await import(join(ROOT, 'ops', file))) as Record<string, unknown>;
      for (const [name, value] of Object.entries(module)) fromFiles.set(name, value);
    }
    expect(Object.keys(ops).sort()).toEqual([...fromFiles.keys()].sort());
    for (const [name, value] of fromFiles) expect((ops as Record<string, unknown>)[name], name).toBe(value);
  });

  it("keeps the ops' shared argument checks out of it (ops/arguments/)", () => {
    expect(ops).not.toHaveProperty('argumentError');
    expect(ops).not.toHaveProperty('checkedCustomOpAttributes');
    expect(ops).not.toHaveProperty('controlFlowError');
  });
});
