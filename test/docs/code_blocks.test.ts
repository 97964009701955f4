/**
 * Docs that cannot rot: every TypeScript and JavaScript block of the pages
 * runs as a program here, unless it is marked as a fragment; README.md's
 * JavaScript blocks, the quick start, run from the packed and installed
 * package instead (test/package/pack_install.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { codeBlocks, isProgram, markdownPages, PROGRAM_LANGUAGES, runBlock } from './markdown_code.js';

const blocks = markdownPages().flatMap(codeBlocks);
/** The quick start, run from the installed package by the pack test. */
const quickStart = (b: { page: string; language: string }) => b.page === 'README.md' && b.language === 'js';

describe('the code blocks of README.md, CONTRIBUTING.md and docs/', () => {
  it('each say their language, and the programs among them are TypeScript or JavaScript', () => {
    const unlabelled = blocks.filter((b) => b.language === '').map((b) => `${b.page}:${b.line}`);
    expect(unlabelled).toEqual([]);
    const fragmentsOfOtherLanguages = blocks.filter((b) => b.flags.includes('fragment') && !PROGRAM_LANGUAGES.includes(b.language)).map((b) => `${b.page}:${b.line}`);
    expect(fragmentsOfOtherLanguages).toEqual([]);
    expect(blocks.filter(quickStart).length).toBeGreaterThanOrEqual(5);
  });

  describe.concurrent('run, each as a program of its own', () => {
    for (const block of blocks.filter((b) => isProgram(b) && !quickStart(b))) {
      it(`${block.page}:${block.line}`, async () => {
        const run = await runBlock(block);
        expect(run.stderr, `${block.page}:${block.line} wrote on stderr`).toBe('');
        expect(run.status, `${block.page}:${block.line} failed:\n${run.stdout}`).toBe(0);
      }, 300_000);
    }
  });
});
