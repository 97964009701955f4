/**
 * The readable report of every option value that `Options.toString()` returns,
 * one `name: value` line each, groups indented under their names.
 */
import { type GeneralSettings, type OptionsSettings, RUNTIME_OPTION_KEYS } from './options_settings.js';
import type { TensorLocationData } from '../option_vocabulary/tensor_location_settings.js';

const UNSET = '(unset)';

function plain(value: unknown): string {
  if (value === undefined) return UNSET;
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function enumMember(value: string): string {
  return value;
}

function location(data: TensorLocationData): string {
  const entries = Object.entries(data);
  return entries.length === 0 ? '(engine defaults)' : entries.map(([key, value]) => `${key}=${String(value)}`).join(', ');
}

/** How each general value is written, in report order. */
const GENERAL_LINES: { readonly [K in keyof GeneralSettings]-?: (value: GeneralSettings[K]) => string } = {
  deviceIterations: plain,
  replicationFactor: plain,
  inputReplicaGrouping: (grouping) => `size ${grouping.size}, ${grouping.type}`,
  outputMode: enumMember,
  outputReturnPeriod: plain,
  autoRoundNumIPUs: plain,
  useIpuModel: plain,
  ipuId: plain,
  offlineIpuVersion: plain,
  randomSeed: plain,
  executableCachePath: plain,
  syntheticData: plain,
  logDir: plain,
  modelName: plain,
  connectionType: enumMember,
  syncPattern: enumMember,
  broadcastBuffers: plain,
  anchoredTensors: (anchors) => {
    const names = Object.keys(anchors);
    return names.length === 0
      ? '(none)'
      : names
          .map((name) => {
            const anchor = anchors[name];
            if (anchor === undefined) return name;
            const mode = anchor.outputMode ?? 'as outputs';
            const period = anchor.outputMode === 'EveryN' ? ` every ${anchor.outputReturnPeriod}` : '';
            return `${name} = ${JSON.stringify(anchor.longName)} (${mode}${period})`;
          })
          .join('; ');
  },
  updatableNamedBuffers: (names) => (names.length === 0 ? '(none)' : names.join(', ')),
  relaxOptimizerAttributesChecks: plain,
  showCompilationProgressBar: plain,
  profileDir: plain,
  backend: (backend) => backend ?? UNSET,
  parallelIpus: plain,
  ipuTarget: ({ ipu, ...figures }) => {
    const name = ipu === 'Bow' ? 'Bow IPU' : 'Mk2 GC200';
    const changed = Object.entries(figures);
    return changed.length === 0 ? name : `${name} with ${changed.map(([k, v]) => `${k} ${v}`).join(', ')}`;
  },
  allowOutOfMemory: plain,
  autoRecomputation: plain,
  availableMemoryProportion: (p) =>
    Object.keys(p).length === 0
      ? 'default'
      : Object.entries(p)
          .map(([ipu, v]) => `IPU${ipu} ${v}`)
          .join(', '),
  patterns: (p) => {
    const overrides = Object.entries(p.overrides).map(([name, on]) => `${on ? '+' : '-'}${name}`);
    return [p.level, ...overrides].join(' ');
  },
};

function line(indent: string, name: string, value: string, runtime: boolean): string {
  return `${indent}${name}: ${value}${runtime ? '  (runtime)' : ''}`;
}

/** The report of `settings`; `frozen` is mentioned in the heading. Runtime-only options are marked `(runtime)`. */
export function formatOptionsReport(settings: OptionsSettings, frozen: boolean): string {
  const runtime = new Set<string>(RUNTIME_OPTION_KEYS);
  const lines = [frozen ? 'Options (frozen):' : 'Options:'];
  for (const key of Object.keys(GENERAL_LINES) as (keyof GeneralSettings)[]) {
    const format = GENERAL_LINES[key] as (value: unknown) => string;
    lines.push(line('  ', key, format(settings[key]), runtime.has(key)));
    if (key === 'outputReturnPeriod') lines.push(line('  ', 'executionStrategy', settings.executionStrategy.toString(), false));
  }
  lines.push('  Training:');
  for (const [key, value] of Object.entries(settings.training)) lines.push(line('    ', key, String(value), false));
  lines.push('  Precision:');
  for (const [key, value] of Object.entries(settings.precision)) lines.push(line('    ', key, String(value), false));
  lines.push('  TensorLocations:');
  const { numIOTiles, ...locations } = settings.tensorLocations;
  lines.push(line('    ', 'numIOTiles', plain(numIOTiles), false));
  for (const [kind, data] of Object.entries(locations)) lines.push(line('    ', kind, location(data), false));
  lines.push('  Distributed:');
  for (const [key, value] of Object.entries(settings.distributed)) lines.push(line('    ', key, String(value), runtime.has('distributed')));
  return lines.join('\n');
}
