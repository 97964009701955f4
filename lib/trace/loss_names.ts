/**
 * The loss names a training model takes: tfjs's own (`model.compile({ loss })`),
 * and the short names tfjs gives its metrics and Keras its losses (`mse`,
 * `mae`, `mape`, `msle`, `kld`, `cosine`). Names are matched in any case and
 * with or without underscores (`mean_squared_error`, Keras's spelling), so a
 * name resolves to the one tfjs loss it means. This module loads no tfjs: the
 * command line checks `--loss` before tfjs starts.
 */

/** The names tfjs layers models accept as losses. */
export const LOSS_NAMES = [
  'meanSquaredError',
  'meanAbsoluteError',
  'meanAbsolutePercentageError',
  'meanSquaredLogarithmicError',
  'squaredHinge',
  'hinge',
  'categoricalHinge',
  'logcosh',
  'categoricalCrossentropy',
  'sparseCategoricalCrossentropy',
  'binaryCrossentropy',
  'kullbackLeiblerDivergence',
  'poisson',
  'cosineProximity',
] as const;

/** A tfjs loss name. */
export type LossName = (typeof LOSS_NAMES)[number];

/** The short names of losses (tfjs's metric aliases, Keras's loss aliases), each with the loss it names. */
export const LOSS_ALIASES: Readonly<Record<string, LossName>> = {
  mse: 'meanSquaredError',
  mae: 'meanAbsoluteError',
  mape: 'meanAbsolutePercentageError',
  msle: 'meanSquaredLogarithmicError',
  kld: 'kullbackLeiblerDivergence',
  cosine: 'cosineProximity',
};

/** How a name is compared: in lower case, without underscores. */
function key(name: string): string {
  return name.toLowerCase().replaceAll('_', '');
}

const byKey = new Map<string, LossName>([
  ...LOSS_NAMES.map((n): [string, LossName] => [key(n), n]),
  ...Object.entries(LOSS_ALIASES).map(([a, n]): [string, LossName] => [key(a), n]),
]);

/** The tfjs loss `name` means (`'mse'`, `'MSE'`, `'mean_squared_error'` → `'meanSquaredError'`), or undefined if none. */
export function canonicalLossName(name: string): LossName | undefined {
  return byKey.get(key(name));
}

/** Every loss name and alias, for messages. */
export function lossNamesText(): string {
  return `${LOSS_NAMES.join(', ')}, or ${Object.keys(LOSS_ALIASES).join(', ')}`;
}
