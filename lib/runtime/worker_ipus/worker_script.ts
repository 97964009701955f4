/**
 * How to start the worker IPU program (ipu_worker) in a thread: a small
 * bootstrap, evaluated in the new thread, imports the compiled
 * `ipu_worker.js` next to this module or, when poptfjs runs from its
 * TypeScript sources (vitest, tsx), registers tsx's loader first and imports
 * `ipu_worker.ts` (Node 20 does not apply `--import tsx` in a worker's
 * `execArgv` to its entry module). If the import fails, the bootstrap tells
 * the main thread as the worker itself would, so a missing or broken file is
 * an error, not a hang.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PoptfjsError } from '../../errors.js';

/** The first two arguments of `new Worker(...)` for the worker IPU program. */
export interface WorkerScript {
  readonly filename: string | URL;
  /** True if `filename` is code to evaluate. */
  readonly eval: boolean;
}

/** Code run in the new thread: registers tsx if `tsxApi` is given, then imports `entry`, reporting a failure to the main thread. */
function bootstrap(entry: string, tsxApi: string | undefined): string {
  const load = tsxApi
    ? `import(${JSON.stringify(tsxApi)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); })`
    : `import(${JSON.stringify(entry)})`;
  return `
const { workerData } = require('node:worker_threads');
${load}.catch((error) => {
  const signal = new Int32Array(workerData.signal);
  workerData.port.postMessage({ kind: 'failed', message: 'could not load the worker IPU program: ' + (error && error.message ? error.message : String(error)) });
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
  workerData.port.close();
});
`;
}

/** The URL of tsx's ESM API (`tsx/esm/api`, import condition), as its package.json declares it. */
function tsxEsmApi(from: string): string {
  const manifest = createRequire(from).resolve('tsx/package.json');
  const exports = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(join(dirname(manifest), exports['./esm/api']!.import.default)).href;
}

/** The worker IPU program for this build of poptfjs (compiled JavaScript, or TypeScript sources run through tsx). */
export function ipuWorkerScript(): WorkerScript {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { filename: bootstrap(new URL('./ipu_worker.js', here).href, undefined), eval: true };
  let tsxApi: string;
  try {
    tsxApi = tsxEsmApi(here);
  } catch (error) {
    throw new PoptfjsError('worker IPUs started from the TypeScript sources need tsx (npm install --save-dev tsx), or run the compiled dist/', {
      type: 'runtime',
      cause: error,
    });
  }
  return { filename: bootstrap(new URL('./ipu_worker.ts', here).href, tsxApi), eval: true };
}
