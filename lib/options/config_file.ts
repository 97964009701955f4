/**
 * Options config files, as read by `Options.loadFromFile`.
 *
 * Two formats are accepted. The PopTorch format has one option call per line,
 * without the `options.` prefix (see `config_statements.ts` for what a line
 * may contain):
 *
 * ```
 * # comment
 * deviceIterations(4)
 * Training.gradientAccumulation(2)
 * setExecutionStrategy(poptorch.ShardedExecution())
 * ```
 *
 * A file whose name ends in `.json`, or whose content starts with `{`, is JSON
 * in the shape of `Options.toJSON()`, possibly partial:
 * `{"deviceIterations": 4, "training": {"gradientAccumulation": 2}}`.
 *
 * The PopTorch format has no variables, so IPUs are assigned inline:
 * `setExecutionStrategy(SerialPhasedExecution(Phase(Stage("A").ipu(0), Stage("B").ipu(1))))`.
 *
 * Every problem is a `ConfigFileError` naming the file (or environment
 * variable), line and column.
 */
import { ConfigFileError } from '../common/errors.js';
import { readFileBytes, UnreadableFileError } from '../common/regular_file.js';
import { runConfigStatements } from './config_statements.js';
import { parseConfig } from './config_syntax.js';
import { ConfigSourceError } from './config_tokens.js';
import { JsonSyntaxError, parseLocatedJson, type LocatedJson } from './json_locations.js';
import { applyOptionsData } from './options_data.js';
import { OptionsDataError } from '../option_vocabulary/options_data_error.js';
import type { OptionSetters } from './option_setters.js';

/** The largest options file read: far more than settings take (80,000 buffer names take about 1 MB); a larger file is not one. */
const MAX_OPTIONS_FILE_BYTES = 64 * 2 ** 20;

/** True when a config file is JSON: its name ends in `.json` or its content starts with `{`. */
function isJsonConfig(path: string, text: string): boolean {
  return path.toLowerCase().endsWith('.json') || text.trimStart().startsWith('{');
}

/**
 * Applies the PopTorch-format config `text` to `options`; `source` names the
 * text in errors. Statements before a failing one are already applied.
 */
function applyConfigText(options: OptionSetters, text: string, source: string): void {
  try {
    runConfigStatements(options, parseConfig(text));
  } catch (error) {
    if (!(error instanceof ConfigSourceError)) throw error;
    throw new ConfigFileError(source, error.position.line, error.position.column, error.message, error.cause);
  }
}

/**
 * Applies the JSON options `text` to `options`; `source` names the text in
 * errors, which point at the offending key. Keys before a failing one are
 * already applied.
 */
export function applyJsonConfigText(options: OptionSetters, text: string, source: string): void {
  let document: LocatedJson;
  try {
    document = parseLocatedJson(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new ConfigFileError(source, error.position.line, error.position.column, `invalid JSON: ${error.message}`, error);
  }
  try {
    applyOptionsData(options, document.value);
  } catch (error) {
    if (!(error instanceof OptionsDataError)) throw error;
    const { line, column } = document.positionOf(error.path);
    throw new ConfigFileError(source, line, column, error.message, error.cause ?? error);
  }
}

/** Reads the config file at `path` and applies it to `options`, in whichever format it is. */
export function loadOptionsFile(options: OptionSetters, path: string): void {
  let text: string;
  try {
    text = new TextDecoder().decode(readFileBytes(path, { maxBytes: MAX_OPTIONS_FILE_BYTES, what: 'an options file' }));
  } catch (error) {
    const reason = error instanceof UnreadableFileError ? error.reason : String(error);
    throw new ConfigFileError(path, 1, 1, `cannot read the options file: ${reason}`, error);
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  if (isJsonConfig(path, text)) applyJsonConfigText(options, text, path);
  else applyConfigText(options, text, path);
}
