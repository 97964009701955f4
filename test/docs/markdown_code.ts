/**
 * The code blocks of the project's Markdown pages (README.md, CONTRIBUTING.md
 * and docs/), and running one as a program of its own, as a user who pasted
 * it into a file of their project would.
 *
 * A TypeScript or JavaScript block runs unless its info string says
 * `fragment` (```` ```ts fragment ````): a part of a program, shown in context.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../run_program.js';

/** A fenced code block of a Markdown page. */
export interface CodeBlock {
  /** The page, relative to the repository root. */
  readonly page: string;
  /** The line of the opening fence, from 1. */
  readonly line: number;
  /** The language (the info string's first word). */
  readonly language: string;
  /** The info string's other words (`fragment`). */
  readonly flags: readonly string[];
  readonly code: string;
}

/** The languages whose blocks are programs. */
export const PROGRAM_LANGUAGES = ['ts', 'typescript', 'js', 'javascript'];

/** README.md, CONTRIBUTING.md and every page of docs/, relative to the repository root. */
export function markdownPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs.sort()];
}

/** The fenced code blocks of `page`. */
export function codeBlocks(page: string): CodeBlock[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const end = lines.findIndex((l, j) => j > i && l.trimStart().startsWith(fence!) && l.trim() === fence);
    if (end < 0) throw new Error(`${page}:${i + 1}: a code block that does not end`);
    const [language = '', ...flags] = info!.trim().split(/\s+/).filter(Boolean);
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l))
      .join('\n');
    blocks.push({ page, line: i + 1, language, flags, code: `${code}\n` });
    i = end;
  }
  return blocks;
}

/** True if the block is a program to run (not a fragment, not another language). */
export function isProgram(block: CodeBlock): boolean {
  return PROGRAM_LANGUAGES.includes(block.language) && !block.flags.includes('fragment');
}

/** What a block printed and how it exited. */
export interface BlockRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The directory it ran in (files it wrote are there). */
  readonly directory: string;
}

const tsx = pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('tsx')).href;

/**
 * Runs `block` as a program in a fresh directory (so the files it writes stay
 * there), with `poptfjs` resolved to the sources and a simulated IPU system of
 * its own; resolves when it exits (or is killed after `timeoutMs`).
 */
export function runBlock(block: CodeBlock, timeoutMs = 300_000): Promise<BlockRun> {
  const directory = mkdtempSync(join(tmpdir(), 'poptfjs-docs-block-'));
  const file = join(directory, block.language.startsWith('j') ? 'block.mjs' : 'block.mts');
  writeFileSync(file, block.code);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', tsx, file], {
      cwd: directory,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json'), POPTFJS_IPU_LOCK_DIR: mkdtempSync(join(tmpdir(), 'poptfjs-docs-ipus-')) },
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr, directory }));
  });
}
