/**
 * `npm run bench`: the benchmarks, each measured side by side with its
 * baseline in one process, printed as median step times and ratios.
 */
import { currentBackend } from 'poptfjs';
import { mlpTrainingCases } from './mlp_training_step.js';
import { wasmKernelCases } from './wasm_kernels.js';
import { formatResults, runSideBySide } from './side_by_side.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
console.log(`poptfjs benchmarks on the tfjs '${currentBackend()}' backend, ${rounds} rounds, median of each case\n`);
console.log(formatResults('MLP 784-512-512-10 training step, batch 64, SGD', await runSideBySide(mlpTrainingCases(), rounds)));
for (const b of await wasmKernelCases()) console.log(`\n${formatResults(b.title, await runSideBySide(b.cases, b.rounds, b.warmup))}`);
