/**
 * The host-memory table: MobileNetV2- and ResNet-50-sized models trained at
 * growing micro-batches, and at growing host batches of one micro-batch
 * (gradient accumulation), each in a process of its own
 * (`host_memory_probe`), with the host memory poptfjs estimated for the step
 * beside the peaks measured: the wasm heap (which only grows, so its final
 * size is its peak) and the process's resident memory. What it shows: the
 * host's memory follows the micro-batch, not the host batch.
 */
import { type FailedProbe, runProbe } from './probe_process.js';
import type { ProbeResult } from './host_memory_probe.js';

/** The title of the table, as `BENCH_ONLY` matches it. */
export const HOST_MEMORY_TITLE = 'Peak host memory against micro-batch and host batch';

/** One configuration measured. */
export interface HostMemoryConfig {
  readonly model: 'mobilenet-v2' | 'resnet-50';
  readonly imageSize: number;
  readonly hostBatch: number;
  readonly microBatch: number;
}

/** What was measured, or why not. */
export interface HostMemoryRow {
  readonly config: HostMemoryConfig;
  readonly result: ProbeResult | FailedProbe;
}

/** The configurations: micro-batches 1, 2, 4 (one per call), then host batches of micro-batch 4 (MobileNetV2) and 2 (ResNet-50). */
export const HOST_MEMORY_CONFIGS: readonly HostMemoryConfig[] = [
  ...[
    [1, 1],
    [2, 2],
    [4, 4],
    [16, 4],
    [64, 4],
  ].map(([hostBatch, microBatch]) => ({ model: 'mobilenet-v2' as const, imageSize: 224, hostBatch: hostBatch!, microBatch: microBatch! })),
  ...[
    [1, 1],
    [2, 2],
    [4, 2],
    [8, 2],
  ].map(([hostBatch, microBatch]) => ({ model: 'resnet-50' as const, imageSize: 224, hostBatch: hostBatch!, microBatch: microBatch! })),
];

/** Runs one probe in a child process (its own IPU locks, so nothing else holds its IPUs). */
function probe(config: HostMemoryConfig): HostMemoryRow {
  return { config, result: runProbe<ProbeResult>('host_memory_probe', [config.model, String(config.imageSize), String(config.hostBatch), String(config.microBatch)]) };
}

/** Measures every configuration, one after another. */
export function hostMemoryRows(configs: readonly HostMemoryConfig[] = HOST_MEMORY_CONFIGS): HostMemoryRow[] {
  return configs.map(probe);
}

const MiB = 2 ** 20;
const mib = (bytes: number | undefined) => (bytes === undefined ? '–' : (bytes / MiB).toFixed(0));
const MODEL_NAMES: Record<HostMemoryConfig['model'], string> = { 'mobilenet-v2': 'MobileNetV2 (3.5 M)', 'resnet-50': 'ResNet-50 (25.6 M)' };

function cells(row: HostMemoryRow): string[] {
  const { config, result } = row;
  const head = [MODEL_NAMES[config.model], `${config.imageSize}`, `${config.hostBatch}`, `${config.microBatch}`];
  if ('failed' in result) return [...head, `failed: ${result.failed}`, '', '', '', '', ''];
  return [...head, mib(result.estimated), mib(result.estimatedActivations), mib(result.tensorsPeak), mib(result.heap), mib(result.maxRss), (result.stepMs / 1000).toFixed(1)];
}

const HEADERS = [
  'model (parameters)',
  'image',
  'host batch',
  'micro-batch',
  'estimated MiB',
  'of it activations MiB',
  'tensors peak MiB',
  'wasm heap peak MiB',
  'peak RSS MiB',
  'step s',
];

/** The table as text, for the console. */
export function hostMemoryText(rows: readonly HostMemoryRow[]): string {
  const table = [HEADERS, ...rows.map(cells)];
  const widths = HEADERS.map((_, c) => Math.max(...table.map((r) => (r[c] ?? '').length)));
  return [`${HOST_MEMORY_TITLE}:`, ...table.map((r) => `  ${r.map((cell, c) => cell.padStart(widths[c]!)).join('  ')}`)].join('\n');
}

/** The table as a Markdown section, for bench/RESULTS.md. */
export function hostMemoryMarkdown(rows: readonly HostMemoryRow[]): string {
  return [
    `## ${HOST_MEMORY_TITLE}`,
    '',
    'Each row trains the model (SGD, every layer, random 224×224 images) for one step in a process of its own, on the wasm backend:',
    'the host batch as micro-batches (`gradientAccumulation` = host batch / micro-batch). "estimated" is the host memory poptfjs',
    'computes for the step before running it (`executor.hostMemory()`: weights and their device copies, optimizer state and',
    'accumulated gradients, inputs, and the activations of the schedule\'s peak); "tensors peak" is what tfjs counted its',
    'tensors to take after any kernel of the step, the figure the estimate models. The wasm heap only grows, and in steps of',
    'up to a fifth of its size, so its final size is its peak to within that step; it also holds what the backend keeps',
    "beside tensors (XNNPACK's packed weights, the allocator's free blocks). The peak RSS adds Node.js and the compiled wasm.",
    'At a fixed micro-batch, a larger host batch costs its inputs and, from two micro-batches on, the accumulated gradients.',
    '',
    `| ${HEADERS.join(' | ')} |`,
    `|---|${HEADERS.slice(1)
      .map(() => '---:')
      .join('|')}|`,
    ...rows.map((r) => `| ${cells(r).join(' | ')} |`),
  ].join('\n');
}
