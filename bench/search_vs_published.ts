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
import { availableParallelism, loadavg } from 'node:os';
import { autoPlan, half, Options, type AutoPlan, type AutoPlanRequest, type IpuTargetName, type PlanBuild } from 'poptfjs';
import { BERT_BASE, BERT_LARGE, bertInputs, bertPretraining, bertQuestionAnswering, bertQuestionAnsweringInputs, type BertConfig } from '../examples/models/bert.js';
import { resnet50 } from '../examples/models/resnet50.js';
import { VIT_B16, VIT_B16_PRETRAINING, vitClassifier, type VitConfig } from '../examples/models/vit.js';
import {
  bertLamb,
  PUBLISHED_RESULTS,
  RESNET_CHECKPOINTS,
  resnetSgd,
  squadAdamW,
  vitLamb,
  vitSgd,
  type PublishedResult,
  type RowOptimizer,
} from './calibration/published_results.js';

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

/** Float16 with float16 partials on `ipu`, as the rows plan them. */
function halfPartials(ipu: IpuTargetName): Options {
  const options = new Options().ipuTarget(ipu);
  options.Precision.setPartialsType('half');
  return options;
}

/** The inputs of one sample: each micro-batch input without its batch dimension, float inputs in float16. */
function perSample(inputs: ReadonlyArray<{ shape: number[]; dtype: 'int32' | 'float32' }>): AutoPlanRequest['inputs'] {
  return inputs.map((input) => ({ ...input, shape: input.shape.slice(1), ...(input.dtype === 'float32' ? { dtype: 'float16' as const } : {}) }));
}

/** A BERT pre-training row: LAMB with float16 accumulator and first moment, float16 inputs, each layer a block (the search chooses the IPU of each). */
function bertProblem(
  row: SearchProblem['row'],
  config: BertConfig,
  run: { ipu: IpuTargetName; sequence: number; globalBatch: number; layersPerIpu: readonly number[]; sequencesPerRow?: number },
): SearchProblem {
  return {
    row,
    ...(run.sequencesPerRow ? { itemsPerSample: run.sequencesPerRow } : {}),
    // The placement given here is the published one, which the search overrides.
    build: () => bertPretraining(config, { layersPerIpu: run.layersPerIpu, embeddingIpu: 0, float16: true }),
    request: {
      ipus: 16,
      globalBatch: run.globalBatch,
      training: true,
      optimizer: bertLamb,
      inputs: perSample(bertInputs(config, 1, run.sequence)),
      options: halfPartials(run.ipu),
    },
  };
}

/** The BERT SQuAD row: the question-answering head, AdamW with float16 accumulator and first moment, as the row plans it. */
function bertQuestionAnsweringProblem(
  row: SearchProblem['row'],
  config: BertConfig,
  run: { ipu: IpuTargetName; sequence: number; globalBatch: number; layersPerIpu: readonly number[] },
): SearchProblem {
  return {
    row,
    build: () => bertQuestionAnswering(config, { layersPerIpu: run.layersPerIpu, embeddingIpu: 0, float16: true }),
    request: {
      ipus: 16,
      globalBatch: run.globalBatch,
      training: true,
      optimizer: squadAdamW,
      inputs: perSample(bertQuestionAnsweringInputs(1, run.sequence)),
      options: halfPartials(run.ipu),
    },
  };
}

/** A ResNet-50 row: SGD with momentum, recomputation between the rows' checkpoints, batch-norm statistics per replica as the published configurations keep them. */
function resnetProblem(row: SearchProblem['row'], ipu: IpuTargetName, globalBatch: number): SearchProblem {
  return {
    row,
    build: () => half(resnet50({ checkpoints: RESNET_CHECKPOINTS })),
    request: {
      ipus: 16,
      globalBatch,
      loss: 'categoricalCrossentropy',
      optimizer: resnetSgd,
      inputs: [{ shape: [224, 224, 3], dtype: 'float16' }],
      target: { shape: [1000], dtype: 'float16' },
      options: halfPartials(ipu).broadcastBuffers(false),
    },
  };
}

/** A ViT-B/16 row: the images and labels as inputs, each layer a block, the row's optimizer. */
function vitProblem(row: SearchProblem['row'], config: VitConfig, run: { ipus: number; globalBatch: number; optimizer: RowOptimizer }): SearchProblem {
  return {
    row,
    build: () => vitClassifier(config, { layersPerIpu: [3, 3, 3, 3], float16: true }),
    request: {
      ipus: run.ipus,
      globalBatch: run.globalBatch,
      training: true,
      optimizer: run.optimizer,
      inputs: [
        { shape: [224, 224, 3], dtype: 'float16' },
        { shape: [1000], dtype: 'float16' },
      ],
      options: halfPartials('Bow'),
    },
  };
}

const BERT_LARGE_PLACEMENT = [3, 7, 7, 7];
const BERT_BASE_PLACEMENT = [0, 4, 4, 4];

/** The rows searched: each row of the calibration table, with its model, IPUs, global batch, target IPU, precision and optimizer. */
export const SEARCH_PROBLEMS: readonly SearchProblem[] = [
  bertProblem({ model: 'BERT-Large pre-training phase 1 (SL 128)', system: 'Bow Pod16', framework: 'TensorFlow 2, SDK 3.3' }, BERT_LARGE, {
    ipu: 'Bow',
    sequence: 128,
    globalBatch: 8 * 4 * 2040,
    layersPerIpu: BERT_LARGE_PLACEMENT,
  }),
  bertProblem({ model: 'BERT-Large pre-training phase 1 (SL 128)', system: 'IPU-POD16 (Mk2)', framework: 'TensorFlow, SDK 2.3' }, BERT_LARGE, {
    ipu: 'GC200',
    sequence: 128,
    globalBatch: 8 * 4 * 2040,
    layersPerIpu: BERT_LARGE_PLACEMENT,
  }),
  bertProblem({ model: 'BERT-Base pre-training phase 1 (SL 128)', system: 'Bow Pod16', framework: 'PopART, SDK 3.1' }, BERT_BASE, {
    ipu: 'Bow',
    sequence: 128,
    globalBatch: 32 * 4 * 512,
    layersPerIpu: BERT_BASE_PLACEMENT,
  }),
  bertProblem({ model: 'BERT-Base pre-training phase 1 (SL 128)', system: 'Bow Pod16', framework: 'PyTorch, SDK 3.3' }, BERT_BASE, {
    ipu: 'Bow',
    sequence: 128,
    globalBatch: 32 * 4 * 512,
    layersPerIpu: BERT_BASE_PLACEMENT,
  }),
  bertProblem(
    { model: 'BERT-Large pre-training phase 2 (SL 512, packed)', system: 'IPU-POD16 (Mk2)', framework: 'PopART, SDK 2.1 (MLPerf training v1.0)' },
    { ...BERT_LARGE, maskedTokens: 2 * 76 },
    { ipu: 'GC200', sequence: 512, globalBatch: 2 * 4 * 192, layersPerIpu: BERT_LARGE_PLACEMENT, sequencesPerRow: 2 },
  ),
  resnetProblem({ model: 'ResNet-50 v1.5', system: 'IPU-POD16 (Mk2)', framework: 'TensorFlow 1, SDK 2.3 (MLPerf training v1.1)' }, 'GC200', 20 * 16 * 10),
  resnetProblem({ model: 'ResNet-50 v1.5', system: 'Bow Pod16', framework: 'TensorFlow 1, SDK 2.5 (MLPerf training v2.0)' }, 'Bow', 22 * 16 * 10),
  resnetProblem({ model: 'ResNet-50 v1.5', system: 'Bow Pod16', framework: 'PyTorch, SDK 3.0' }, 'Bow', 18 * 57 * 16),
  vitProblem({ model: 'ViT-B/16 fine-tuning (ImageNet-1k)', system: 'Bow Pod16', framework: 'PyTorch, SDK 3.0' }, VIT_B16, {
    ipus: 16,
    globalBatch: 17 * 4 * 30,
    optimizer: vitSgd,
  }),
  vitProblem({ model: 'ViT-B/16 pre-training (ImageNet-1k)', system: 'Bow Pod64', framework: 'PyTorch, pre-SDK 2.5' }, VIT_B16_PRETRAINING, {
    ipus: 64,
    globalBatch: 8 * 16 * 512,
    optimizer: vitLamb,
  }),
  vitProblem({ model: 'ViT-B/16 pre-training (ImageNet-1k)', system: 'Bow Pod64', framework: 'PyTorch, SDK 3.0' }, VIT_B16_PRETRAINING, {
    ipus: 64,
    globalBatch: 8 * 16 * 512,
    optimizer: vitLamb,
  }),
  vitProblem({ model: 'ViT-B/16 pre-training (ImageNet-1k)', system: 'Bow Pod16', framework: 'PyTorch, SDK 3.0' }, VIT_B16_PRETRAINING, {
    ipus: 16,
    globalBatch: 8 * 4 * 2048,
    optimizer: vitLamb,
  }),
  bertProblem({ model: 'BERT-Base pre-training phase 1 (SL 128)', system: 'Bow Pod16', framework: 'TensorFlow 2, SDK 3.3' }, BERT_BASE, {
    ipu: 'Bow',
    sequence: 128,
    globalBatch: 32 * 4 * 510,
    layersPerIpu: BERT_BASE_PLACEMENT,
  }),
  bertProblem(
    { model: 'BERT-Base pre-training phase 2 (SL 384)', system: 'Bow Pod16', framework: 'TensorFlow 2, SDK 3.3' },
    { ...BERT_BASE, maskedTokens: 56 },
    {
      ipu: 'Bow',
      sequence: 384,
      globalBatch: 8 * 4 * 510,
      layersPerIpu: BERT_BASE_PLACEMENT,
    },
  ),
  bertQuestionAnsweringProblem(
    { model: 'BERT-Large fine-tuning (SQuAD, SL 384)', system: 'Bow Pod16', framework: 'PyTorch, SDK 3.3' },
    { ...BERT_LARGE, attentionDropout: 0.15 },
    { ipu: 'Bow', sequence: 384, globalBatch: 4 * 2 * 32, layersPerIpu: [2, 3, 3, 3, 3, 3, 3, 4] },
  ),
];

/** One row of the table. */
export interface SearchRow {
  readonly problem: SearchProblem;
  /** The published configuration planned as published: items per second. */
  readonly published: number;
  /** The search's best: items per second (0 when none fits). */
  readonly found: number;
  readonly search: AutoPlan;
  /** The machine's load average over the last minute when the search ended, and its cores. */
  readonly load: { readonly average: number; readonly cores: number };
}

/** Whether a row meets the goal: at least as fast as published, in under {@link SEARCH_SECONDS}. */
function meetsGoal(r: SearchRow): boolean {
  return r.found >= r.published && r.search.seconds < SEARCH_SECONDS;
}

/** Why a row misses the goal (empty when it meets it): slower than published, or the seconds, the traces and the machine's load. */
function missNote(r: SearchRow): string {
  const notes: string[] = [];
  if (r.found < r.published) notes.push('slower than the published configuration planned as published');
  if (r.search.seconds >= SEARCH_SECONDS) {
    notes.push(`${r.search.seconds.toFixed(0)} s at a load average of ${r.load.average.toFixed(1)} on ${r.load.cores} cores, ${r.search.traces} trace(s)`);
  }
  return notes.join('; ');
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
    const load = { average: loadavg()[0]!, cores: availableParallelism() };
    rows.push({ problem, published, found: (search.best?.throughput ?? 0) * (problem.itemsPerSample ?? 1), search, load });
  }
  return rows;
}

/** The table as text. */
export function searchText(rows: readonly SearchRow[]): string {
  const lines = [`${SEARCH_TITLE} (items/s, simulated; goal: found / published >= 1 in under ${SEARCH_SECONDS} s):`];
  lines.push('  model                                            system            IPUs  global batch  published   found   ratio  seconds  traces  load  candidates  best');
  for (const r of rows) {
    const { model, system } = r.problem.row;
    lines.push(
      `  ${model.padEnd(48)} ${system.padEnd(17)} ${String(r.problem.request.ipus).padStart(4)}  ${String(r.problem.request.globalBatch).padStart(12)}  ${r.published.toFixed(0).padStart(9)}  ${r.found.toFixed(0).padStart(6)}   ${(r.found / r.published).toFixed(2)}  ${r.search.seconds.toFixed(1).padStart(7)}  ${String(r.search.traces).padStart(6)}  ${r.load.average.toFixed(1).padStart(4)}  ${`${r.search.candidates.length}/${r.search.candidates.length + r.search.rejected.length}`.padStart(10)}  ${r.search.best?.describe() ?? 'none fits'}`,
    );
    if (!meetsGoal(r)) lines.push(`    misses the goal: ${missNote(r)}`);
  }
  const met = rows.filter(meetsGoal).length;
  lines.push(`  ${met} of ${rows.length} searches found a configuration at least as fast as the published one in under ${SEARCH_SECONDS} s`);
  return lines.join('\n');
}

/** The table as Markdown. */
export function searchMarkdown(rows: readonly SearchRow[]): string {
  return [
    `## ${SEARCH_TITLE}`,
    '',
    'For each row of the calibration table, `autoPlan()` searches the same IPUs at the same global batch (the same model, target IPU, precision and optimizer), beside the published configuration planned as published. Goal: at least as fast, in under 60 s. Load: the 1-minute load average when the search ended.',
    '',
    '| model | system | framework | IPUs | global batch | published, planned | found | ratio | seconds | traces | load | fit / planned | best | notes |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.problem.row.model} | ${r.problem.row.system} | ${r.problem.row.framework} | ${r.problem.request.ipus} | ${r.problem.request.globalBatch} | ${r.published.toFixed(0)} | ${r.found.toFixed(0)} | ${(r.found / r.published).toFixed(2)} | ${r.search.seconds.toFixed(1)} | ${r.search.traces} | ${r.load.average.toFixed(1)} | ${r.search.candidates.length} / ${r.search.candidates.length + r.search.rejected.length} | ${r.search.best?.describe() ?? 'none fits'} | ${missNote(r)} |`,
    ),
    '',
    `${rows.filter(meetsGoal).length} of ${rows.length} searches found a configuration at least as fast as the published one in under ${SEARCH_SECONDS} s.`,
  ].join('\n');
}
