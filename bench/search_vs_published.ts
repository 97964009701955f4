/**
 * The search against the published configurations: for a row of the
 * calibration table, `autoPlan()` searches the same IPUs at the same global
 * batch, with the same model, target IPU, precision and optimizer, and its
 * best configuration is set beside the published one planned as published
 * (the row's own plan), with the seconds the search took. Goal: the search
 * finds one at least as fast, in under 60 s. `BENCH_ONLY=search` runs it
 * alone; `BENCH_SEARCH_ROWS` (a comma-separated list of row numbers of
 * {@link SEARCH_PROBLEMS}, from 1) keeps some rows.
 */
import { autoPlan, half, optim, Options, type AutoPlan, type AutoPlanRequest, type PlanBuild } from 'poptfjs';
import { BERT_BASE, bertInputs, bertPretraining } from '../examples/models/bert.js';
import { resnet50 } from '../examples/models/resnet50.js';
import { PUBLISHED_RESULTS, type PublishedResult } from './calibration/published_results.js';

/** The title of the table, as `BENCH_ONLY` matches it. */
export const SEARCH_TITLE = 'The search against published configurations';

/** The seconds a search may take. */
export const SEARCH_SECONDS = 60;

/** A published row and the search over its IPUs and global batch. */
export interface SearchProblem {
  /** The row of the calibration table: its model, system and framework. */
  readonly row: Pick<PublishedResult, 'model' | 'system' | 'framework'>;
  /** Items one sample of the model stands for (packed sequences), as the row counts them. */
  readonly itemsPerSample?: number;
  readonly build: PlanBuild;
  readonly request: AutoPlanRequest;
}

/** Float16 with float16 partials on a Bow IPU, as the rows plan them. */
function bowHalf(): Options {
  const options = new Options().ipuTarget('Bow');
  options.Precision.setPartialsType('half');
  return options;
}

/** The rows searched: the same model, IPUs, global batch, precision and optimizer as each published configuration. */
export const SEARCH_PROBLEMS: readonly SearchProblem[] = [
  {
    row: { model: 'BERT-Base pre-training phase 1 (SL 128)', system: 'Bow Pod16', framework: 'PyTorch, SDK 3.3' },
    // Each layer a block: the search chooses the IPU of each (the placement given here is the published one, which it overrides).
    build: () => bertPretraining(BERT_BASE, { layersPerIpu: [0, 4, 4, 4], embeddingIpu: 0, float16: true }),
    request: {
      ipus: 16,
      globalBatch: 32 * 512 * 4,
      training: true,
      optimizer: (params) => new optim.LAMB(params, { lr: 1e-3, accumType: 'float16', firstOrderMomentumAccumType: 'float16' }),
      inputs: bertInputs(BERT_BASE, 1, 128).map((input) => ({ ...input, shape: input.shape.slice(1), ...(input.dtype === 'float32' ? { dtype: 'float16' as const } : {}) })),
      options: bowHalf(),
    },
  },
  {
    row: { model: 'ResNet-50 v1.5', system: 'Bow Pod16', framework: 'PyTorch, SDK 3.0' },
    build: () => half(resnet50({ checkpoints: ['stage1/unit1', 'stage1/unit3', 'stage2/unit1', 'stage2/unit3', 'stage3/unit1', 'stage3/unit4'] })),
    request: {
      ipus: 16,
      globalBatch: 18 * 57 * 16,
      loss: 'categoricalCrossentropy',
      optimizer: (model) => new optim.SGD(model, { lr: 0.1, momentum: 0.9 }),
      inputs: [{ shape: [224, 224, 3], dtype: 'float16' }],
      target: { shape: [1000], dtype: 'float16' },
      // Batch-norm statistics per replica, as the published configuration keeps them.
      options: bowHalf().broadcastBuffers(false),
    },
  },
];

/** One row of the table. */
export interface SearchRow {
  readonly problem: SearchProblem;
  /** The published configuration planned as published: items per second. */
  readonly published: number;
  /** The search's best: items per second (0 when none fits). */
  readonly found: number;
  readonly search: AutoPlan;
}

/** The calibration row a problem searches. */
function publishedRow(problem: SearchProblem): PublishedResult {
  const row = PUBLISHED_RESULTS.find((r) => r.model === problem.row.model && r.system === problem.row.system && r.framework === problem.row.framework);
  if (!row) throw new Error(`no calibration row ${problem.row.model}, ${problem.row.system}, ${problem.row.framework}`);
  return row;
}

/** Searches each problem (those `BENCH_SEARCH_ROWS` keeps) and plans its published configuration. */
export async function searchRows(problems: readonly SearchProblem[] = SEARCH_PROBLEMS): Promise<SearchRow[]> {
  const kept = process.env.BENCH_SEARCH_ROWS?.split(',').map((n) => Number(n) - 1);
  const rows: SearchRow[] = [];
  for (const [i, problem] of problems.entries()) {
    if (kept && !kept.includes(i)) continue;
    const published = (await publishedRow(problem).simulate()).itemsPerSecond;
    const search = await autoPlan(problem.build, problem.request);
    rows.push({ problem, published, found: (search.best?.throughput ?? 0) * (problem.itemsPerSample ?? 1), search });
  }
  return rows;
}

/** The table as text. */
export function searchText(rows: readonly SearchRow[]): string {
  const lines = [`${SEARCH_TITLE} (items/s, simulated; goal: found / published >= 1 in under ${SEARCH_SECONDS} s):`];
  lines.push('  model                                      system      IPUs  global batch  published   found   ratio  seconds  candidates  best');
  for (const r of rows) {
    const { model, system } = r.problem.row;
    lines.push(
      `  ${model.padEnd(42)} ${system.padEnd(11)} ${String(r.problem.request.ipus).padStart(4)}  ${String(r.problem.request.globalBatch).padStart(12)}  ${r.published.toFixed(0).padStart(9)}  ${r.found.toFixed(0).padStart(6)}   ${(r.found / r.published).toFixed(2)}  ${r.search.seconds.toFixed(1).padStart(7)}  ${`${r.search.candidates.length}/${r.search.candidates.length + r.search.rejected.length}`.padStart(10)}  ${r.search.best?.describe() ?? 'none fits'}`,
    );
  }
  const met = rows.filter((r) => r.found >= r.published && r.search.seconds < SEARCH_SECONDS).length;
  lines.push(`  ${met} of ${rows.length} searches found a configuration at least as fast as the published one in under ${SEARCH_SECONDS} s`);
  return lines.join('\n');
}

/** The table as Markdown. */
export function searchMarkdown(rows: readonly SearchRow[]): string {
  return [
    `## ${SEARCH_TITLE}`,
    '',
    'For a row of the calibration table, `autoPlan()` searches the same IPUs at the same global batch (the same model, target IPU, precision and optimizer), beside the published configuration planned as published. Goal: at least as fast, in under 60 s.',
    '',
    '| model | system | IPUs | global batch | published, planned | found | ratio | seconds | fit / planned | best |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.problem.row.model} | ${r.problem.row.system} | ${r.problem.request.ipus} | ${r.problem.request.globalBatch} | ${r.published.toFixed(0)} | ${r.found.toFixed(0)} | ${(r.found / r.published).toFixed(2)} | ${r.search.seconds.toFixed(1)} | ${r.search.candidates.length} / ${r.search.candidates.length + r.search.rejected.length} | ${r.search.best?.describe() ?? 'none fits'} |`,
    ),
  ].join('\n');
}
