/**
 * The error raised when options data (the `toJSON()` shape, a JSON config file,
 * `POPTFJS_DEFAULT_OPTIONS`) has an unknown key or a value its setter refuses.
 */
import type { z } from 'zod';
import { PoptfjsError } from '../common/errors.js';

/** A key path into options data: `['training', 'gradientAccumulation']`. */
export type OptionsDataPath = readonly (string | number)[];

/** Writes a key path the way JavaScript would: `training.gradientAccumulation`, `stages[0].ipu`. */
function formatDataPath(path: OptionsDataPath): string {
  return path.map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${key}`)).join('');
}

/** Options data that could not be applied; `path` locates the offending key. */
export class OptionsDataError extends PoptfjsError {
  /** Where in the data the error is (empty: the data as a whole). */
  readonly path: OptionsDataPath;
  /** What is wrong, without the path. */
  readonly reason: string;

  constructor(path: OptionsDataPath, reason: string, cause?: unknown) {
    super(path.length > 0 ? `${formatDataPath(path)}: ${reason}` : reason, { type: 'options', cause });
    this.path = path;
    this.reason = reason;
  }
}

/**
 * The first problem zod found in options data, as an {@link OptionsDataError}
 * whose path is `basePath` followed by the problem's path. An unknown key is
 * reported at the key itself: `unknown key "gradAccum"`.
 */
export function optionsDataErrorFromZod(error: z.ZodError, basePath: OptionsDataPath = []): OptionsDataError {
  const issue = error.issues[0];
  if (issue === undefined) return new OptionsDataError(basePath, 'invalid options data', error);
  const issuePath = issue.path.filter((key): key is string | number => typeof key !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    const [first] = issue.keys;
    const names = issue.keys.map((key) => JSON.stringify(key)).join(', ');
    const message = issue.keys.length === 1 ? `unknown key ${names}` : `unknown keys ${names}`;
    return new OptionsDataError([...basePath, ...issuePath, ...(first === undefined ? [] : [first])], message, error);
  }
  return new OptionsDataError([...basePath, ...issuePath], issue.message, error);
}
