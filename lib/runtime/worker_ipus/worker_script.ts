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
import { PoptfjsError } from '../../common/errors.js';

/** The first two arguments of `new Worker(...)` for the worker IPU program. */
export interface WorkerScript {
  readonly filename: string | URL;
  /** True if `filename` is code to evaluate. */
  readonly eval: boolean;
}

/** Code run in the new thread: registers tsx if `tsxApi` is given, then imports `entry`, reporting a failure (of loading `program`) to the main thread. */
function bootstrap(entry: string, tsxApi: string | undefined, program: string): string {
  const load = tsxApi ? `import(${JSON.stringify(tsxApi)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); })` : `import(${JSON.stringify(entry)})`;
  return `
const { workerData } = require('node:worker_threads');
${load}.catch((error) => {
  const signal = new Int32Array(workerData.signal);
  workerData.port.postMessage({ kind: 'failed', message: ${JSON.stringify(`could not load the ${program}: `)} + (error && error.message ? error.message : String(error)) });
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

/**
 * A thread program of this build of poptfjs: the module `name` (without its
 * extension) next to the module at URL `here`, compiled JavaScript or
 * TypeScript run through tsx. Its `workerData` has the `signal` and `port`
 * the bootstrap reports a failure to load it through; `program` names it in
 * errors ('worker IPU program').
 */
export function threadProgramScript(here: string, name: string, program: string): WorkerScript {
  if (!here.endsWith('.ts')) return { filename: bootstrap(new URL(`./${name}.js`, here).href, undefined, program), eval: true };
  let tsxApi: string;
  try {
    tsxApi = tsxEsmApi(here);
  } catch (error) {
    throw new PoptfjsError(`the ${program} started from the TypeScript sources needs tsx (npm install --save-dev tsx), or run the compiled dist/`, {
      type: 'runtime',
      cause: error,
    });
  }
  return { filename: bootstrap(new URL(`./${name}.ts`, here).href, tsxApi, program), eval: true };
}

/** The worker IPU program for this build of poptfjs (compiled JavaScript, or TypeScript sources run through tsx). */
export function ipuWorkerScript(): WorkerScript {
  return threadProgramScript(import.meta.url, 'ipu_worker', 'worker IPU program');
}
