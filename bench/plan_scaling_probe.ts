/**
 * One row of the plan-scaling benchmark, in a process of its own (so its
 * peak resident memory is the plan's): plans a model and prints, as one JSON
 * line, the wall and CPU seconds `plan()` took, the process's resident memory
 * before it and at its peak, and the size of what was planned.
 *
 * Run: node dist/bench/plan_scaling_probe.js <gpt-2048 layers | bert-large | gpt-3>
 */
import { AutoStage, initBackend, Options, optim, PipelinedExecution, plan, RecomputationType, TensorLocationSettings, type Plan } from 'poptfjs';
import { BERT_LARGE, bertInputs, bertPretraining } from '../examples/models/bert.js';
import { GPT3_175B, gptInputs, gptLanguageModel, gptOfWidth2048, type GptConfig } from '../examples/models/gpt.js';

/** What one probe prints. */
export interface PlanScalingResult {
  /** Decoder or encoder layers of the model. */
  readonly layers: number;
  readonly parameters: number;
  /** Nodes of the compiled graph (forward, backward and patterns' rewrites). */
  readonly nodes: number;
  readonly ipus: number;
  /** Wall seconds of `plan()`. */
  readonly seconds: number;
  /** CPU seconds of the process during `plan()` (all threads). */
  readonly cpuSeconds: number;
  /** Resident memory before `plan()` (tfjs and poptfjs loaded), in bytes. */
  readonly rssBefore: number;
  /** The process's peak resident memory, in bytes. */
  readonly maxRss: number;
  readonly fits: boolean;
}

/** A GPT decoder language model pipelined over `ipus` IPUs, one micro-batch of a full sequence, Adam, `accumulation` micro-batches. */
function planGpt(config: GptConfig, ipus: number, accumulation: number): Promise<Plan> {
  const options = new Options().setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement));
  options.Training.gradientAccumulation(accumulation);
  return plan(() => gptLanguageModel(config, ipus), { options, training: true, optimizer: 'adam', inputs: gptInputs(1, config.maxPositions) });
}

/** BERT-Large pre-training as examples/plan-bert-large.ts plans it on 4 IPUs (float16, LAMB, 2040 micro-batches of 8 × 128). */
function planBertLarge(): Promise<Plan> {
  const options = new Options().autoRecomputation(RecomputationType.Pipeline).setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement));
  options.Training.gradientAccumulation(2040);
  options.Precision.setPartialsType('half');
  options.setAvailableMemoryProportion({ IPU0: 0.15, IPU1: 0.25, IPU2: 0.25, IPU3: 0.25 });
  options.TensorLocations.setOptimizerLocation(new TensorLocationSettings().useOnChipStorage(false).useReplicatedTensorSharding(true));
  return plan(() => bertPretraining(BERT_LARGE, { layersPerIpu: [3, 7, 7, 7], float16: true }), {
    options,
    training: true,
    optimizer: (params) => new optim.LAMB(params, { lr: 1e-3, accumType: 'float16', firstOrderMomentumAccumType: 'float16' }),
    inputs: bertInputs(BERT_LARGE, 8, 128).map((input) => (input.dtype === 'float32' ? { ...input, dtype: 'float16' as const } : input)),
  });
}

/** The models the benchmark plans, by name: their layers, IPUs and plan. */
export const PLAN_SCALING_MODELS: Readonly<Record<string, (layers: number) => { layers: number; ipus: number; plan: () => Promise<Plan> }>> = {
  'gpt-2048': (layers) => ({ layers, ipus: 4, plan: () => planGpt(gptOfWidth2048(layers), 4, 64) }),
  'bert-large': () => ({ layers: BERT_LARGE.layers, ipus: 4, plan: planBertLarge }),
  // 64 IPUs, 96 layers: 129 pipeline stages, so at least 129 micro-batches.
  'gpt-3': () => ({ layers: GPT3_175B.layers, ipus: 64, plan: () => planGpt(GPT3_175B, 64, 256) }),
};

const isMain = process.argv[1]?.endsWith('plan_scaling_probe.js') || process.argv[1]?.endsWith('plan_scaling_probe.ts');
if (isMain) {
  const [name, layers] = process.argv.slice(2);
  const model = PLAN_SCALING_MODELS[name ?? '']?.(Number(layers ?? 0));
  if (model === undefined || (name === 'gpt-2048' && !(model.layers > 0))) {
    console.error(`usage: plan_scaling_probe <${Object.keys(PLAN_SCALING_MODELS).join('|')}> [layers, for gpt-2048]`);
    process.exit(2);
  }
  await initBackend();
  const rssBefore = process.memoryUsage().rss;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const planned = await model.plan();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const result: PlanScalingResult = {
    layers: model.layers,
    parameters: planned.parameters,
    nodes: planned.executable.graph.nodes.length,
    ipus: model.ipus,
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    rssBefore,
    maxRss: process.resourceUsage().maxRSS * 1024,
    fits: planned.fits,
  };
  console.log(JSON.stringify(result));
}
