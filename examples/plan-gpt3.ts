/**
 * Will GPT-3 train on 64 IPUs? `plan()` answers for the 175 B-parameter
 * decoder written with tfjs ops as a user writes it (examples/models/gpt.ts:
 * 96 layers of 12288, 96 heads, sequence 2048, 50257 tokens), pipelined over
 * 64 IPUs with Adam and 256 micro-batches accumulated, without computing any
 * of its 700 GB of float32 weights: they have shapes and no values, so the
 * plan takes seconds and a few hundred MB of host memory. The plan's progress
 * (its steps and the kernels traced) is drawn on stderr.
 *
 * Run: npx tsx examples/plan-gpt3.ts [layers]
 */
import { AutoStage, Options, PipelinedExecution, plan } from 'poptfjs';
import { GPT3_175B, gptInputs, gptLanguageModel } from './models/gpt.js';

const layers = Number(process.argv[2] ?? GPT3_175B.layers);
if (!Number.isInteger(layers) || layers < 1) throw new Error(`expected a number of layers, got '${process.argv[2]}'`);
const config = { ...GPT3_175B, layers };
const IPUS = 64;
const GiB = 2 ** 30;

const options = new Options().setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement)).showCompilationProgressBar(true);
options.Training.gradientAccumulation(256);
const started = performance.now();
const planned = await plan(() => gptLanguageModel(config, IPUS), { options, training: true, optimizer: 'adam', inputs: gptInputs(1, config.maxPositions) });
const seconds = (performance.now() - started) / 1000;

const fullest = planned.memory.ipus.reduce((a, b) => (b.used / b.capacity > a.used / a.capacity ? b : a));
const weights = planned.memory.ipus.reduce((n, m) => n + m.byKind.weights, 0);
console.log(`GPT-3 with ${layers} layers (${(planned.parameters / 1e9).toFixed(1)} G parameters) pipelined over ${IPUS} IPUs, Adam, 256 micro-batches of one sequence`);
console.log(`fits:            ${planned.fits ? 'yes' : 'no'}`);
console.log(`fullest IPU:     IPU ${fullest.ipu} ${(fullest.used / GiB).toFixed(1)} GiB of ${(fullest.capacity / GiB).toFixed(2)} GiB`);
console.log(`weights:         ${(weights / GiB).toFixed(1)} GiB over the IPUs (${((4 * planned.parameters) / GiB).toFixed(1)} GiB of float32 parameters)`);
console.log(`throughput:      ${planned.throughput.toFixed(3)} sequences/s`);
console.log(`graph:           ${planned.executable.graph.nodes.length} nodes`);
console.log(`planned in:      ${seconds.toFixed(1)} s, host peak RSS ${((process.resourceUsage().maxRSS * 1024) / GiB).toFixed(2)} GiB`);
