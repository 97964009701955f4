// `npm run build` (and `npm install`, through `prepare`): compiles the
// TypeScript sources into dist/ with tsc, saying what it does and how long it
// took. It first writes ops/index.ts from the files of ops/ (scripts/ops_index.mjs).
// The build is incremental (dist/.tsbuildinfo): a build after a small
// change, or none, takes seconds instead of the first build's minute.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { writeOpsIndex } from './ops_index.mjs';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const started = performance.now();
writeOpsIndex(fileURLToPath(new URL('..', import.meta.url)));
console.error('poptfjs: compiling lib, optim, ops, bin, examples, bench and scripts into dist/ with tsc (a minute or so the first time)...');
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', 'dist/.tsbuildinfo'], { stdio: 'inherit' });
const seconds = ((performance.now() - started) / 1000).toFixed(1);
if (result.status !== 0) {
  console.error(`poptfjs: the build failed after ${seconds} s`);
  process.exit(result.status ?? 1);
}
console.error(`poptfjs: dist/ built in ${seconds} s`);
