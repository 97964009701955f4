/**
 * What a poptfjs file holds, as text (`npx poptfjs inspect <file>`): for an
 * exported executable, the version, the model and its signature, the
 * batching, the options it was compiled with, the strategy and placement,
 * the memory and time on the target, and the sizes of its parts; for a
 * checkpoint, the model, the parameters and the device state. The file is
 * verified and decoded, never run.
 */
import { constantData } from '../ir/graph.js';
import { formatBytes } from '../ipu/byte_size.js';
import { Options } from '../options/options.js';
import { executionSummary, memoryTable } from './summary_report.js';
import { planText } from './plan_text.js';
import { readFileBytes } from '../common/regular_file.js';
import { batchFormula, hostBatchSize } from '../executable/batch_plan.js';
import { decodeCheckpointFile, type CheckpointContents } from '../files/checkpoint_file.js';
import type { DeviceState } from '../executable/device_state.js';
import type { TensorSignature } from '../executable/executable.js';
import { decodeExecutableFile, type ExecutableFileContents } from '../files/executable_file.js';
import { decodeFileEnvelope } from '../files/file_envelope.js';
import { describeOptimizer } from '../files/optimizer_config.js';
import { describeParameter, type ParameterSpec } from '../files/parameter_spec.js';
import { tensorDataBytes, type TensorData } from '../proto/tensor_bytes.js';

function row(label: string, value: string): string {
  return `${label.padEnd(16)}${value}`;
}

function signatureText(what: string, signature: readonly TensorSignature[]): string {
  return signature.map((s, i) => `${what} ${i}: ${s.dtype}[${s.shape.join(',')}]`).join(', ') || 'none';
}

function parameterLines(parameters: readonly ParameterSpec[]): string[] {
  const bytes = parameters.reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1) * (p.dtype === 'bool' ? 1 : 4), 0);
  const width = Math.max(0, ...parameters.map((p) => p.name.length));
  return [row('parameters', `${parameters.length} (${formatBytes(bytes)})`), ...parameters.map((p) => `  ${p.name.padEnd(width)}  ${describeParameter(p)}`)];
}

function deviceStateLines(state: DeviceState<TensorData>): string[] {
  const lines = [row('iterations', `${state.iterations} device iteration(s) run`), row('loss scale', String(state.lossScale))];
  lines.push(row('random state', `[${state.randomState.map((w) => `0x${w.toString(16).padStart(8, '0')}`).join(', ')}]`));
  if (state.weights) {
    const replicas = Math.max(0, ...[...state.weights.values()].map((v) => v.length));
    const bytes = [...state.weights.values()].reduce((n, values) => n + values.reduce((m, t) => m + tensorDataBytes(t), 0), 0);
    lines.push(row('weights', `${state.weights.size} parameter(s) on ${replicas} replica(s) (${formatBytes(bytes)})`));
  }
  if (state.optimizerStates.length === 0) lines.push(row('optimizer', 'no state yet'));
  for (const record of state.optimizerStates) {
    const slots = [...record.slots.values()].flatMap((s) => Object.values(s));
    const owner = record.groupedParam === undefined ? 'shared state' : `state of '${record.groupedParam}' replica group ${record.replicaGroup}`;
    const names = [...new Set([...record.slots.values()].flatMap((s) => Object.keys(s)))];
    lines.push(
      row(
        'optimizer',
        `${owner}: step ${record.step}, ${slots.length} slot tensor(s)${names.length ? ` (${names.join(', ')})` : ''}, ${formatBytes(slots.reduce((n, t) => n + tensorDataBytes(t), 0))}`,
      ),
    );
  }
  return lines;
}

/** The options that differ from the defaults, one `key: value` line each. */
function optionLines(options: unknown): string[] {
  const defaults = new Options({ fromEnvironment: false }).toJSON() as unknown as Record<string, unknown>;
  const given = options as Record<string, unknown>;
  const changed = Object.keys(given).filter((k) => k !== 'showCompilationProgressBar' && JSON.stringify(given[k]) !== JSON.stringify(defaults[k]));
  if (changed.length === 0) return [row('options', 'defaults')];
  return [row('options', `${changed.length} set:`), ...changed.map((k) => `  ${k}: ${JSON.stringify(given[k])}`)];
}

function executableText(file: string, size: number, version: string, contents: ExecutableFileContents): string {
  const { executable: e, model, deviceState } = contents;
  const constants = e.graph.values.filter((v) => v.source.kind === 'constant');
  const constantBytes = constants.reduce((n, v) => n + (v.source.kind === 'constant' ? tensorDataBytes({ shape: v.shape, dtype: v.dtype, data: constantData(v) }) : 0), 0);
  const lines = [
    row('file', `${file} (${formatBytes(size)})`),
    row('content', `exported executable, ${model ? 'with its model (load() restores it)' : 'without its model (use loadExecutable)'}`),
    row('poptfjs', `${version} (content hash verified)`),
    row('created', `${new Date(contents.createdUnixMs).toISOString()} on the tfjs '${contents.backend}' backend`),
    row('model', `'${e.modelName}', ${e.kind}`),
    row('inputs', signatureText('input', e.inputSignature)),
    row(
      'outputs',
      signatureText(
        'output',
        e.graph.roles.outputs.map((id) => e.graph.values[id]!),
      ),
    ),
    row('batching', `host batch ${hostBatchSize(e.factors, e.microBatchSize)} = ${batchFormula(e.factors, e.microBatchSize)}`),
    row('output mode', `${e.outputMode}${e.outputMode === 'EveryN' ? ` (every ${e.outputReturnPeriod})` : ''}`),
    row('graph', `${e.graph.nodes.length} nodes, ${e.graph.values.length} values, ${constants.length} constants (${formatBytes(constantBytes)})`),
    row(
      'patterns',
      Object.entries(e.firedPatterns)
        .map(([k, n]) => `${k} ×${n}`)
        .join(', ') || 'none fired',
    ),
    ...parameterLines(contents.parameters),
    row('optimizer', contents.optimizer ? describeOptimizer(contents.optimizer) : 'none'),
    ...optionLines(contents.options),
  ];
  if (model) {
    const bytes = [...model.weights.values()].reduce((n, t) => n + tensorDataBytes(t), 0);
    lines.push(row('exported model', `forward pass of ${model.forwardGraph.nodes.length} nodes over ${model.inputCount} input(s), weights ${formatBytes(bytes)}`));
  }
  if (deviceState) lines.push(...deviceStateLines(deviceState));
  return [lines.join('\n'), planText(e.placement, e.schedule, e.streamingTransfers), memoryTable(e), executionSummary(e)].join('\n\n');
}

function checkpointText(file: string, size: number, version: string, c: CheckpointContents): string {
  return [
    row('file', `${file} (${formatBytes(size)})`),
    row('content', 'checkpoint'),
    row('poptfjs', `${version} (content hash verified)`),
    row('created', `${new Date(c.createdUnixMs).toISOString()} on the tfjs '${c.backend}' backend`),
    row('model', `'${c.modelName}', ${c.kind}`),
    row('inputs', signatureText('input', c.inputSignature)),
    row('batching', `host batch ${hostBatchSize(c.factors, c.microBatchSize)} = ${batchFormula(c.factors, c.microBatchSize)}`),
    ...parameterLines(c.parameters),
    ...(c.optimizer ? [row('optimizer', describeOptimizer(c.optimizer))] : []),
    ...deviceStateLines(c.deviceState),
  ].join('\n');
}

/** What the poptfjs file at `path` holds, as text; an error naming the file and what failed if it cannot be read. */
export function describePoptfjsFile(path: string): string {
  const bytes = readFileBytes(path);
  const { content, version } = decodeFileEnvelope(bytes, path);
  return content === 'executable'
    ? executableText(path, bytes.length, version, decodeExecutableFile(bytes, path))
    : checkpointText(path, bytes.length, version, decodeCheckpointFile(bytes, path));
}
