/**
 * An optimizer as files record it: its type, its attribute values (those
 * with one value for the whole optimizer, and those of each parameter group,
 * with the group's parameters by name) and which attributes are variable.
 * Enough to build the same optimizer again over another model's variables,
 * and to tell whether a checkpoint's optimizer state fits another one.
 */
import type { Optimizer } from '../../optim/optimizer.js';
import type { OptimizerConfigMessage } from '../proto/executable_proto.js';
import { parseLossless, stringifyLossless } from '../proto/lossless_json.js';

/** One parameter group: its parameters by name and its attribute values. */
export interface OptimizerGroupConfig {
  readonly params: readonly string[];
  readonly values: Readonly<Record<string, unknown>>;
}

/** An optimizer's configuration. */
export interface OptimizerConfig {
  readonly type: string;
  /** Attributes with one value for the whole optimizer (`lossScaling`, `accumType`, ...). */
  readonly global: Readonly<Record<string, unknown>>;
  readonly groups: readonly OptimizerGroupConfig[];
  /** The attributes that are variable (the others are constant). */
  readonly variableAttributes: readonly string[];
}

/** The configuration of an optimizer. */
export function optimizerConfig(optimizer: Optimizer): OptimizerConfig {
  const settings = optimizer.settings();
  return {
    type: settings.type,
    global: { ...settings.global },
    groups: settings.groups.map((values, g) => ({ params: [...settings.groupParams[g]!], values: { ...values } })),
    variableAttributes: optimizer.variableAttrs.variableNames(),
  };
}

/** The configuration with every parameter name passed through `rename`. */
export function renameOptimizerConfig(config: OptimizerConfig, rename: (name: string) => string): OptimizerConfig {
  return { ...config, groups: config.groups.map((g) => ({ ...g, params: g.params.map(rename) })) };
}

/** The `OptimizerConfig` message of a configuration. */
export function optimizerConfigMessage(config: OptimizerConfig): OptimizerConfigMessage {
  const { type, ...settings } = config;
  return { type, settings_json: stringifyLossless(settings) };
}

/** A configuration from its message; `where` names the file in errors. */
export function optimizerConfigFromMessage(message: OptimizerConfigMessage, where: string): OptimizerConfig {
  const settings = parseLossless(message.settings_json, `${where} optimizer`) as Omit<OptimizerConfig, 'type'>;
  return { type: message.type, global: settings.global ?? {}, groups: settings.groups ?? [], variableAttributes: settings.variableAttributes ?? [] };
}

/** The attribute values as `name=value` pairs (a group's values when all groups agree), for messages. */
export function describeOptimizer(config: OptimizerConfig): string {
  const values = config.groups.length === 1 ? { ...config.groups[0]!.values, ...config.global } : config.global;
  const pairs = Object.entries(values).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  const groups = config.groups.length === 1 ? '' : `, ${config.groups.length} parameter groups`;
  return `optim.${config.type}(${pairs.join(', ')}${groups})`;
}
