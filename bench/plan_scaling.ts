/**
 * The plan-scaling table: how long `plan()` takes and how much host memory
 * it holds as the model grows, each plan in a process of its own
 * (`plan_scaling_probe`): a GPT-style decoder of width 2048 at 12, 24 and 48
 * layers, BERT-Large, and a GPT-3-sized decoder (175 B parameters) on 64
 * IPUs. What it shows: a plan costs what the model's graph costs, about
 * linearly in its layers and independently of its widths, since no weight's
 * value is computed.
 */
import { type FailedProbe, runProbe } from './probe_process.js';
import type { PlanScalingResult } from './plan_scaling_probe.js';

/** The title of the table, as `BENCH_ONLY` matches it. */
export const PLAN_SCALING_TITLE = 'Plan time and host memory against model size';

/** What the plans aim for: 48 layers within 5× the time of 12, BERT-Large under 3 s, GPT-3 under 60 s and 2 GiB. */
export const PLAN_SCALING_GOALS = { layerRatio: 5, bertLargeSeconds: 3, gpt3Seconds: 60, gpt3Bytes: 2 * 2 ** 30 } as const;

/** One model planned. */
export interface PlanScalingConfig {
  readonly model: 'gpt-2048' | 'bert-large' | 'gpt-3';
  /** Layers, for the width-2048 decoder. */
  readonly layers?: number;
}

/** What was measured, or why not. */
export interface PlanScalingRow {
  readonly config: PlanScalingConfig;
  readonly result: PlanScalingResult | FailedProbe;
}

/** The configurations, smallest first. */
export const PLAN_SCALING_CONFIGS: readonly PlanScalingConfig[] = [
  { model: 'gpt-2048', layers: 12 },
  { model: 'gpt-2048', layers: 24 },
  { model: 'gpt-2048', layers: 48 },
  { model: 'bert-large' },
  { model: 'gpt-3' },
];

/** Runs one probe in a child process (its own IPU locks). */
function probe(config: PlanScalingConfig): PlanScalingRow {
  return { config, result: runProbe<PlanScalingResult>('plan_scaling_probe', [config.model, ...(config.layers === undefined ? [] : [String(config.layers)])]) };
}

/** Plans every configuration, one after another. */
export function planScalingRows(configs: readonly PlanScalingConfig[] = PLAN_SCALING_CONFIGS): PlanScalingRow[] {
  return configs.map(probe);
}

const MiB = 2 ** 20;
const MODEL_NAMES: Record<PlanScalingConfig['model'], string> = {
  'gpt-2048': 'GPT decoder, width 2048, sequence 512, 32000 tokens',
  'bert-large': 'BERT-Large pre-training, 8 × 128 tokens',
  'gpt-3': 'GPT-3 175B: width 12288, 96 heads, sequence 2048, 50257 tokens',
};

function cells(row: PlanScalingRow): string[] {
  const { config, result } = row;
  if ('failed' in result) return [MODEL_NAMES[config.model], `${config.layers ?? ''}`, '', '', '', `failed: ${result.failed}`, '', '', ''];
  return [
    MODEL_NAMES[config.model],
    `${result.layers}`,
    `${(result.parameters / 1e9).toFixed(2)} G`,
    `${result.ipus}`,
    `${result.nodes}`,
    result.seconds.toFixed(1),
    result.cpuSeconds.toFixed(1),
    (result.rssBefore / MiB).toFixed(0),
    (result.maxRss / MiB).toFixed(0),
  ];
}

const HEADERS = ['model', 'layers', 'parameters', 'IPUs', 'graph nodes', 'plan s', 'CPU s', 'RSS before MiB', 'peak RSS MiB'];

/** Whether the rows meet {@link PLAN_SCALING_GOALS}, with the figures. */
export function planScalingVerdict(rows: readonly PlanScalingRow[]): string {
  const measured = (model: PlanScalingConfig['model'], layers?: number) => {
    const row = rows.find((r) => r.config.model === model && (layers === undefined || r.config.layers === layers));
    return row && !('failed' in row.result) ? row.result : undefined;
  };
  const [twelve, fortyEight, bert, gpt3] = [measured('gpt-2048', 12), measured('gpt-2048', 48), measured('bert-large'), measured('gpt-3')];
  const parts: string[] = [];
  if (twelve && fortyEight) {
    const ratio = fortyEight.seconds / twelve.seconds;
    parts.push(
      `48 layers take ${ratio.toFixed(2)}× the time of 12 (CPU ${(fortyEight.cpuSeconds / twelve.cpuSeconds).toFixed(2)}×; goal ≤ ${PLAN_SCALING_GOALS.layerRatio}×)`,
    );
  }
  if (bert) parts.push(`BERT-Large ${bert.seconds.toFixed(1)} s (goal < ${PLAN_SCALING_GOALS.bertLargeSeconds} s)`);
  if (gpt3) parts.push(`GPT-3 ${gpt3.seconds.toFixed(1)} s and ${(gpt3.maxRss / 2 ** 30).toFixed(2)} GiB peak (goal < ${PLAN_SCALING_GOALS.gpt3Seconds} s, < 2 GiB)`);
  return parts.join('; ');
}

/** The table as text, for the console. */
export function planScalingText(rows: readonly PlanScalingRow[]): string {
  const table = [HEADERS, ...rows.map(cells)];
  const widths = HEADERS.map((_, c) => Math.max(...table.map((r) => (r[c] ?? '').length)));
  return [
    `${PLAN_SCALING_TITLE}:`,
    ...table.map((r) => `  ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')}`),
    `  ${planScalingVerdict(rows)}`,
  ].join('\n');
}

/** The table as a Markdown section, for bench/RESULTS.md. */
export function planScalingMarkdown(rows: readonly PlanScalingRow[]): string {
  return [
    `## ${PLAN_SCALING_TITLE}`,
    '',
    'Each row is one `plan()` of a training step in a process of its own (bench/plan_scaling_probe.ts), the model written with',
    'tfjs ops as a user writes it (examples/models): weights from `tf.randomNormal`/`tf.truncatedNormal`, biases and norms from',
    '`tf.zeros`/`tf.ones`, dropout. The GPT decoders are pipelined over 4 IPUs (64 micro-batches, Adam), GPT-3 over 64 (256',
    'micro-batches), BERT-Large as examples/plan-bert-large.ts plans it on 4 IPUs. "plan s" is wall time, "CPU s" the',
    'process\'s CPU time meanwhile (wall time includes whatever else the machine runs); "RSS before" is the process',
    'with tfjs and poptfjs loaded, "peak RSS" its peak over the plan.',
    '',
    `| ${HEADERS.join(' | ')} |`,
    `|---|${HEADERS.slice(1)
      .map(() => '---:')
      .join('|')}|`,
    ...rows.map((r) => `| ${cells(r).join(' | ')} |`),
    '',
    planScalingVerdict(rows),
  ].join('\n');
}
