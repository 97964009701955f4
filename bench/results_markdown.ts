/** The benchmark results as Markdown, for bench/RESULTS.md. */
import type { BenchmarkTable } from './benchmark.js';
import type { MachineRow } from './machine.js';

function table(t: BenchmarkTable): string {
  const baseline = t.results[0]!;
  const rows = t.results.map((r) => `| ${r.name} | ${r.medianMs.toFixed(2)} | ${r.samples} | ${(r.medianMs / baseline.medianMs).toFixed(3)} |`);
  return [`### ${t.title}`, '', `| case | median ms | samples | ratio to ${baseline.name} |`, '|---|---:|---:|---:|', ...rows, ...(t.verdict ? ['', t.verdict] : [])].join(
    '\n',
  );
}

/** The whole results page: how it was measured, the machine, one table per benchmark, then the further sections (Markdown, each with its heading). */
export function resultsMarkdown(tables: readonly BenchmarkTable[], machine: readonly MachineRow[], notes: readonly string[], sections: readonly string[] = []): string {
  return [
    '# poptfjs benchmark results',
    '',
    'Written by `npm run bench` (`bench/run.ts`). The cases of a table take turns within each round,',
    'so they see the same machine state; each reports its median step time. Numbers on a shared',
    'machine are noisy: compare cases within a table, not across runs.',
    '',
    '## Machine',
    '',
    '| | |',
    '|---|---|',
    ...machine.map((m) => `| ${m.label} | ${m.value} |`),
    ...(notes.length ? ['', ...notes.map((n) => `- ${n}`)] : []),
    '',
    '## Results',
    '',
    tables.map(table).join('\n\n'),
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
}
