/**
 * tfjs's kernels that only make sense on the host (strings, which an IPU
 * does not hold; drawing to and reading from a browser's canvas) and its
 * random draws of categories: a model that uses them is costed as if the
 * device ran them, so that it can still be planned.
 */
import { unlistedCost, UNLISTED_COST_NOTE } from './cost_rules.js';
import { flopsPerOutput } from './flop_rules.js';
import type { TfjsKernelRecord, TfjsKernelRecords } from './tfjs_record.js';

const host: TfjsKernelRecord = { category: 'host', cost: unlistedCost, flops: flopsPerOutput(1), costNote: UNLISTED_COST_NOTE };

/** tfjs's host kernels and its seeded draws, by name. */
export const HOST_RECORDS: TfjsKernelRecords = {
  StaticRegexReplace: host,
  StringNGrams: host,
  StringSplit: host,
  StringToHashBucketFast: host,
  Draw: host,
  FromPixels: host,
  /** Samples of categories, drawn by the kernel from its own `seed` attribute (not the run's generator). */
  Multinomial: { ...host, category: 'random' },
};
