/**
 * Option flags given in an environment variable, as Poplar reads
 * `POPLAR_ENGINE_OPTIONS` and `POPLAR_RUNTIME_OPTIONS`: a JSON object whose
 * values are strings (booleans and numbers are read as Poplar reads them,
 * as their text). poptfjs's own name of the variable is read first, then
 * Poplar's (common/environment.ts).
 */
import { ConfigFileError } from '../common/errors.js';
import { environmentSetting } from '../common/environment.js';

/** Where option flags come from, for messages, and the error to raise for a bad one. */
export interface OptionFlagsSource {
  /** What holds them: `SessionOptions.engineOptions`, `POPLAR_ENGINE_OPTIONS`. */
  readonly name: string;
  readonly error: (message: string) => Error;
}

/** Option flags read from the environment, as given, and where they came from. */
export interface EnvironmentOptionFlags {
  /** The variable they were read from. */
  readonly variable: string;
  readonly options: Readonly<Record<string, string>>;
  /** The error to raise for a bad one. */
  readonly source: OptionFlagsSource;
}

/**
 * The option flags of the variable `name` (or of its other name); undefined
 * when neither is set. A `ConfigFileError` for text that is not a JSON
 * object of strings, which names `what` they are and shows `example`.
 */
export function environmentOptionFlags(name: string, what: string, example: string, env: NodeJS.ProcessEnv = process.env): EnvironmentOptionFlags | undefined {
  const setting = environmentSetting(name, env);
  if (setting === undefined || setting.value.trim() === '') return undefined;
  const error = (message: string) => new ConfigFileError(setting.variable, 1, 1, message);
  let parsed: unknown;
  try {
    parsed = JSON.parse(setting.value);
  } catch (cause) {
    throw new ConfigFileError(setting.variable, 1, 1, `not valid JSON: ${(cause as Error).message}`, cause);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw error(`expected a JSON object of ${what}, e.g. ${example}`);
  const options: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== 'string' && typeof value !== 'boolean' && typeof value !== 'number') throw error(`'${key}' is ${JSON.stringify(value)}; expected a string`);
    options[key] = String(value);
  }
  return { variable: setting.variable, options, source: { name: setting.variable, error } };
}
