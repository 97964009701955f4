/**
 * Will BERT-Large train on 1, 4 or 16 IPUs, and how fast? `plan()` answers
 * without hardware and without computing the model: it builds the 336 M
 * parameter model with shapes only, traces a pre-training step and compiles
 * it for each placement, in Graphcore's configuration (float16 with float16
 * partials, LAMB, recomputation with a checkpoint per layer, optimizer state
 * off chip and sharded over the replicas, micro-batch 8 of sequence length
 * 128, 2040 micro-batches accumulated):
 *
 * - 1 IPU: every layer on one IPU;
 * - 4 IPUs: the embeddings and layers 0-2 on IPU 0, seven layers on each of
 *   IPUs 1-3, the heads back on IPU 0, pipelined;
 * - 16 IPUs: that pipeline on 4 replicas.
 *
 * Run: npx tsx examples/plan-bert-large.ts [GC200|Bow]
 */
import { AutoStage, IPU_TARGETS, Options, PipelinedExecution, RecomputationType, TensorLocationSettings, optim, plan, type IpuTargetName } from 'poptfjs';
import { BERT_LARGE, bertInputs, bertPretraining } from './models/bert.js';

const target = (process.argv[2] ?? 'GC200') as IpuTargetName;
if (!IPU_TARGETS.includes(target)) throw new Error(`unknown IPU '${target}'; expected one of ${IPU_TARGETS.join(', ')}`);

const MICRO_BATCH = 8;
const SEQUENCE = 128;
const ACCUMULATION = 2040;
const placements: Array<{ ipus: number; replicas: number; layersPerIpu: number[]; proportions: Record<string, number> }> = [
  { ipus: 1, replicas: 1, layersPerIpu: [24], proportions: { IPU0: 0.15 } },
  { ipus: 4, replicas: 1, layersPerIpu: [3, 7, 7, 7], proportions: { IPU0: 0.15, IPU1: 0.25, IPU2: 0.25, IPU3: 0.25 } },
  { ipus: 16, replicas: 4, layersPerIpu: [3, 7, 7, 7], proportions: { IPU0: 0.15, IPU1: 0.25, IPU2: 0.25, IPU3: 0.25 } },
];
const GiB = 2 ** 30;

console.log(`BERT-Large pre-training (sequence length ${SEQUENCE}, micro-batch ${MICRO_BATCH}, ${ACCUMULATION} micro-batches accumulated) on ${target} IPUs`);
console.log('IPUs  replicas  fits  fullest IPU          throughput       step       weights (params)  planned in  host RSS');
for (const p of placements) {
  const opts = new Options().ipuTarget(target).replicationFactor(p.replicas).autoRecomputation(RecomputationType.Pipeline);
  opts.setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement));
  opts.Training.gradientAccumulation(ACCUMULATION);
  opts.Precision.setPartialsType('half');
  opts.setAvailableMemoryProportion(p.proportions);
  opts.TensorLocations.setOptimizerLocation(new TensorLocationSettings().useOnChipStorage(false).useReplicatedTensorSharding(true));
  const started = performance.now();
  const planned = await plan(() => bertPretraining(BERT_LARGE, { layersPerIpu: p.layersPerIpu, float16: true }), {
    options: opts,
    training: true,
    optimizer: (params) => new optim.LAMB(params, { lr: 1e-3, accumType: 'float16', firstOrderMomentumAccumType: 'float16' }),
    inputs: bertInputs(BERT_LARGE, MICRO_BATCH, SEQUENCE).map((input) => (input.dtype === 'float32' ? { ...input, dtype: 'float16' as const } : input)),
  });
  const seconds = (performance.now() - started) / 1000;
  const fullest = planned.memory.ipus.reduce((a, b) => (b.used / b.capacity > a.used / a.capacity ? b : a));
  // Weights are float16: two bytes a parameter.
  const weightParameters = planned.memory.ipus.reduce((n, m) => n + m.byKind.weights, 0) / 2;
  console.log(
    `${String(p.ipus).padEnd(5)} ${String(p.replicas).padEnd(9)} ${(planned.fits ? 'yes' : 'no').padEnd(5)} ` +
      `${`IPU ${fullest.ipu} ${(fullest.used / GiB).toFixed(2)} GiB ${((100 * fullest.used) / fullest.capacity).toFixed(0)}%`.padEnd(20)} ` +
      `${`${planned.throughput.toFixed(0)} seq/s`.padEnd(16)} ${`${planned.timeline.duration.toFixed(2)} s`.padEnd(10)} ` +
      `${`${(weightParameters / 1e6).toFixed(1)} M (${(planned.parameters / 1e6).toFixed(1)} M)`.padEnd(17)} ${`${seconds.toFixed(1)} s`.padEnd(11)} ` +
      `${(process.memoryUsage().rss / GiB).toFixed(2)} GiB`,
  );
}
