/**
 * The `bench/` folder of the source tree, whichever way the benchmarks run:
 * from `bench/` (tsx) or compiled into `dist/bench/` (`npm run bench`).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The source `bench/` folder: the one holding `pytorch_reference.py`. */
export function benchDirectory(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return existsSync(join(here, 'pytorch_reference.py')) ? here : resolve(here, '../../bench');
}
