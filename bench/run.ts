/**
 * `npm run bench`: the benchmarks, each measured side by side with its
 * baseline in one process, printed as median step times and ratios and
 * written to bench/RESULTS.md with a description of the machine.
 *
 * A benchmark is a {@link Benchmark} in `benchmarks()` below; to add one
 * (e.g. a pipelined model on 4 simulated IPUs against 1, in-process and
 * with worker IPUs; the load time of an executable-cache hit), write a
 * module exporting it and add it to the list. `BENCH_ROUNDS` sets the timed
 * rounds (default 20); `BENCH_ONLY` keeps the benchmarks whose title
 * contains it (the file is then not written). After them, the calibration
 * table plans Graphcore's published configurations and sets their
 * simulated throughput beside the published one (`BENCH_ONLY=Calibration`
 * runs it alone), the layer-cost table sets the simulator's time of a ViT-B/16
 * and a BERT-Base encoder layer per token, forward and training, side by side
 * (`BENCH_ONLY="layer cost"`), and the host-memory table measures peak host memory
 * against micro-batch and host batch (`BENCH_ONLY=host memory`), and the
 * plan-scaling table plans models from 12 decoder layers to GPT-3's size,
 * each in a process of its own (`BENCH_ONLY="plan time"`). The
 * search table sets `autoPlan()`'s best beside published configurations
 * over the same IPUs and global batch (`BENCH_ONLY=search`). The ONNX
 * session table runs torchvision models in a poptfjs session and in
 * onnxruntime-node, side by side (`BENCH_ONLY=onnxruntime`).
 * `BENCH_ONLY="MPI instances"` runs the step of 1 instance × 2 replicas
 * against 2 instances × 1 replica under `poptfjs run` (MPICH or Open MPI).
 * `BENCH_ONLY="wasm threads by size"` runs a tiny MLP, the MLP and the CNN
 * each on one wasm thread, on all and on the automatic choice, one process
 * per case; `BENCH_ONLY="wasm kernels on one thread"` measures the
 * threshold of that choice.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentBackend, initBackend } from 'poptfjs';
import { benchDirectory } from './bench_directory.js';
import { cacheHitLoadBenchmark } from './cache_hit_load.js';
import { CALIBRATION_TITLE, calibrationMarkdown, calibrationRows, calibrationText } from './calibration/calibration_table.js';
import type { Benchmark, BenchmarkTable } from './benchmark.js';
import { cnnTrainingBenchmark } from './cnn_training_step.js';
import { compileTimeBenchmark } from './compile_time.js';
import { LAYER_COST_TITLE, layerCostMarkdown, layerCostRows, layerCostText } from './calibration/layer_cost_split.js';
import { HOST_MEMORY_TITLE, hostMemoryMarkdown, hostMemoryRows, hostMemoryText } from './host_memory_table.js';
import { SESSION_TABLE_TITLE, sessionTable, sessionTableMarkdown, sessionTableText } from './onnx_session_table.js';
import { distributedInstancesBenchmark } from './distributed_instances.js';
import { describeMachine } from './machine.js';
import { mlpTrainingBenchmark } from './mlp_training_step.js';
import { pipelinedIpusBenchmark } from './pipelined_ipus.js';
import { PLAN_SCALING_TITLE, planScalingMarkdown, planScalingRows, planScalingText } from './plan_scaling.js';
import { enableRelaxedSimd } from './relaxed_simd.js';
import { PyTorchReference } from './pytorch_reference_process.js';
import { resnet50TrainingBenchmark } from './resnet50_training_step.js';
import { resultsMarkdown } from './results_markdown.js';
import { SEARCH_TITLE, searchMarkdown, searchRows, searchText } from './search_vs_published.js';
import { formatResults, runSideBySide } from './side_by_side.js';
import { wasmKernelBenchmarks } from './wasm_kernels.js';
import { switchableWasmThreads } from '../lib/backend/wasm_thread_pool.js';
import { wasmPoolKernelsBenchmark } from './wasm_pool_kernels.js';
import { wasmThreadChoiceBenchmarks } from './wasm_thread_choice.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
const only = process.env.BENCH_ONLY;

function benchmarks(pytorch: PyTorchReference | undefined): Benchmark[] {
  return [
    mlpTrainingBenchmark(pytorch, rounds),
    cnnTrainingBenchmark(pytorch, rounds),
    resnet50TrainingBenchmark(Math.max(3, Math.round(rounds / 4))),
    compileTimeBenchmark(Math.max(3, Math.round(rounds / 4))),
    cacheHitLoadBenchmark(Math.max(3, Math.round(rounds / 4))),
    ...wasmKernelBenchmarks(rounds),
    ...(switchableWasmThreads() === undefined ? [] : [wasmPoolKernelsBenchmark(rounds)]),
    ...wasmThreadChoiceBenchmarks(rounds),
    pipelinedIpusBenchmark(Math.max(3, Math.round(rounds / 4))),
    distributedInstancesBenchmark(rounds),
  ];
}

await initBackend();
const started = await PyTorchReference.start();
const pytorch = started instanceof PyTorchReference ? started : undefined;
const notes = [
  enableRelaxedSimd(),
  pytorch ? `PyTorch reference: bench/pytorch_reference.py in a subprocess, steps timed in Python` : `PyTorch reference skipped: ${(started as { skipped: string }).skipped}`,
];
console.log(`poptfjs benchmarks on the tfjs '${currentBackend()}' backend, ${rounds} rounds, median of each case`);
console.log(notes.join('\n'));
const tables: BenchmarkTable[] = [];
try {
  for (const b of benchmarks(pytorch).filter((b) => only === undefined || b.title.includes(only))) {
    const results = await runSideBySide(await b.cases(), b.rounds, b.warmup, b.rotate);
    const table: BenchmarkTable = { title: b.title, results, ...(b.verdict ? { verdict: b.verdict(results) } : {}) };
    tables.push(table);
    console.log(`\n${formatResults(table.title, table.results)}${table.verdict ? `\n${table.verdict}` : ''}`);
  }
} finally {
  pytorch?.close();
}
const calibration = only === undefined || CALIBRATION_TITLE.includes(only) ? await calibrationRows() : undefined;
if (calibration) console.log(`\n${calibrationText(calibration)}`);
const layerCost = only === undefined || LAYER_COST_TITLE.toLowerCase().includes(only.toLowerCase()) ? await layerCostRows() : undefined;
if (layerCost) console.log(`\n${layerCostText(layerCost)}`);
const searches = only === undefined || SEARCH_TITLE.toLowerCase().includes(only.toLowerCase()) ? await searchRows() : undefined;
if (searches) console.log(`\n${searchText(searches)}`);
const hostMemory = only === undefined || HOST_MEMORY_TITLE.toLowerCase().includes(only.toLowerCase()) ? hostMemoryRows() : undefined;
if (hostMemory) console.log(`\n${hostMemoryText(hostMemory)}`);
const sessions = only === undefined || SESSION_TABLE_TITLE.toLowerCase().includes(only.toLowerCase()) ? await sessionTable(rounds) : undefined;
if (sessions) console.log(`\n${sessionTableText(sessions)}`);
const planScaling = only === undefined || PLAN_SCALING_TITLE.toLowerCase().includes(only.toLowerCase()) ? planScalingRows() : undefined;
if (planScaling) console.log(`\n${planScalingText(planScaling)}`);
if (only === undefined) {
  const machine = describeMachine(
    pytorch ? [{ label: 'PyTorch', value: `${pytorch.info.torch} on Python ${pytorch.info.python}, ${pytorch.info.threads} thread(s) (its own choice)` }] : [],
  );
  const path = join(benchDirectory(), 'RESULTS.md');
  writeFileSync(
    path,
    resultsMarkdown(tables, machine, notes, [
      sessionTableMarkdown(sessions!),
      hostMemoryMarkdown(hostMemory!),
      planScalingMarkdown(planScaling!),
      calibrationMarkdown(calibration!),
      layerCostMarkdown(layerCost!),
      searchMarkdown(searches!),
    ]),
  );
  console.log(`\nwritten to ${path}`);
}
