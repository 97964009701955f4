/**
 * `poptfjs plan <model.json> --ipus N --batch B ...`: plans a saved tfjs
 * layers model on simulated IPUs without computing it, and prints its memory
 * per IPU, placement and simulated throughput (the summary report). A
 * `model.onnx` is planned without reading its weights, for inference or, with
 * `--loss-tensor`, for training; with
 * `--search` the fastest configuration that fits `--ipus` IPUs at a global
 * batch of `--batch` is searched for (`autoPlan`).
 *
 * Options come from a config file (`--config`, read as `Options.loadFromFile`
 * reads it), then the flags. With `--ipus N` above 1 the layers are split
 * into N consecutive pipeline stages of nearly equal simulated time (from a
 * first plan on one IPU). With `--report DIR` the reports (HTML, JSON and
 * Chrome trace) are written there too, each file named on stderr.
 */
import {
  type AutoPlan,
  autoPlan,
  AutoStage,
  BeginBlock,
  loadLayersModelFile,
  half,
  Options,
  PipelinedExecution,
  PoptfjsError,
  balancedGroups,
  layerCycles,
  lossNamesText,
  onnxPipelineStages,
  plan,
  type Plan,
  summaryReport,
  type tf,
  withShapeOnlyBackend,
  writeProfileReports,
  type IpuTargetName,
  type PlanInput,
  type PlanOptimizerName,
  type PlanRequest,
} from 'poptfjs';
import { MAX_DIMENSION } from '../lib/files/layers_topology.js';
import { UsageError, type VerbArguments } from './cli_arguments.js';

function cliError(message: string): PoptfjsError {
  return new PoptfjsError(`plan: ${message}`, { type: 'cli' });
}

/** Runs `poptfjs plan` with its checked arguments; resolves to 0 when the model fits, 1 when it does not. */
export async function planCommand(args: VerbArguments): Promise<number> {
  const path = args.positionals[0]!;
  const batch = args.integer('batch')!;
  if (batch > MAX_DIMENSION) throw new UsageError(`plan: --batch takes a positive integer up to ${MAX_DIMENSION} (a tensor dimension), got ${batch}`);
  const ipus = args.integer('ipus') ?? 1;
  const target = args.string('ipu');
  const optimizer = args.string('optimizer');
  const training = !args.boolean('inference');
  const float16 = args.boolean('float16');

  const options = (groups?: string[][]): Options => {
    const o = new Options();
    const config = args.string('config');
    if (config !== undefined) o.loadFromFile(config);
    if (target !== undefined) o.ipuTarget({ ...o.settings.ipuTarget, ipu: target as IpuTargetName });
    const replicas = args.integer('replicas');
    if (replicas !== undefined) o.replicationFactor(replicas);
    const iterations = args.integer('device-iterations');
    if (iterations !== undefined) o.deviceIterations(iterations);
    const accumulation = args.integer('accumulation');
    if (groups && groups.length > 1) {
      o.setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement));
      const depth = 2 * groups.length - 1;
      if (training) o.Training.gradientAccumulation(accumulation ?? Math.max(o.settings.training.gradientAccumulation, depth));
      else if (iterations === undefined) o.deviceIterations(Math.max(o.settings.deviceIterations, groups.length));
    } else if (accumulation !== undefined) {
      o.Training.gradientAccumulation(accumulation);
    }
    return o;
  };
  const strategy = options().settings.executionStrategy;
  const stageBlocks = 'stages' in strategy ? strategy.stages.flatMap((stage) => stage.blocks) : [];
  const load = async (groups?: string[][]) => {
    const model = await loadLayersModelFile(path);
    if (float16) half(model);
    groups?.forEach((layers, ipu) => layers.forEach((name) => BeginBlock(model.getLayer(name), { ipuId: ipu })));
    // A saved model has no blocks: the stages of a configuration (as --search prints them) name its layers.
    for (const name of stageBlocks) {
      const layer = model.layers.find((l) => l.name === name);
      if (!layer)
        throw cliError(`a stage of the configuration names '${name}', which is not a layer of the model (its layers: ${model.layers.map((l) => l.name).join(', ')})`);
      BeginBlock(layer, { userId: name });
    }
    return model;
  };
  if (args.boolean('search')) {
    for (const searched of ['replicas', 'accumulation', 'device-iterations']) {
      if (args.integer(searched) !== undefined) throw new UsageError(`plan: --search chooses the ${searched.replace('-', ' ')} itself; leave out --${searched}`);
    }
  }
  if (/\.onnx$/i.test(path)) return planOnnxModel(args, path, options);
  if (args.string('loss-tensor') !== undefined)
    throw new UsageError(`plan: --loss-tensor names the loss tensor of an ONNX model; a saved tfjs model takes --loss (${lossNamesText()})`);
  const describe = await describeModel(() => load(), batch, float16);
  describe.loss = args.string('loss') ?? describe.loss;
  if (training && describe.loss === undefined) throw new UsageError(`plan: training needs a loss: give --loss (${lossNamesText()}) or plan --inference`);
  if (training && describe.output === undefined)
    throw cliError('training a model with several outputs needs its own loss; plan it with plan() in a program, or plan --inference');
  const request = (o: Options): PlanRequest => ({
    options: o,
    training,
    inputs: describe.inputs,
    ...(training ? { loss: describe.loss!, target: describe.output! } : {}),
    ...(training && optimizer !== undefined ? { optimizer: optimizer as PlanOptimizerName } : {}),
  });
  if (args.boolean('search')) {
    const unbatched = (input: PlanInput): PlanInput => ({ ...input, shape: input.shape.slice(1) });
    const search = await autoPlan(() => load(), {
      ipus,
      globalBatch: batch,
      training,
      options: options(),
      inputs: describe.inputs.map(unbatched),
      ...(training ? { loss: describe.loss!, target: unbatched(describe.output!) } : {}),
      ...(training && optimizer !== undefined ? { optimizer: optimizer as PlanOptimizerName } : {}),
    });
    return printSearch(args, search);
  }
  let groups: string[][] | undefined;
  if (ipus > 1) {
    const single = await plan(() => load(), request(options()));
    const cycles = layerCycles(single.executable);
    groups = balancedGroups(describe.layers, (name) => cycles.get(name) ?? 0, ipus);
  }
  return printPlan(args, await plan(() => load(groups), request(options(groups))));
}

/** Prints a search: its summary, the best as a config file, and writes its reports when asked; 0 when a configuration fits, 1 when none does. */
function printSearch(args: VerbArguments, search: AutoPlan): number {
  console.log(search.summary());
  if (search.best) console.log(`\nThe best configuration as a config file (--config reads it; the micro-batch is ${search.best.microBatch}):\n${search.best.configText()}`);
  const reports = args.string('report');
  if (reports !== undefined) {
    const written = search.report(reports);
    for (const file of [written.html, written.json, ...(written.best ? [written.best.html, written.best.json, written.best.trace] : [])])
      console.error(`poptfjs plan: wrote ${file}`);
  }
  return search.best ? 0 : 1;
}

/** Prints the plan's summary and verdict and writes its reports when asked; 0 when it fits, 1 when it does not. */
function printPlan(args: VerbArguments, planned: Plan): number {
  // The plan's summary with the simulated execution of a call: planning computes it whether or not profiling is on.
  console.log(summaryReport(planned.executable, true));
  console.log(
    `\n${planned.fits ? 'fits' : 'does NOT fit'} on ${planned.memory.ipus.length} IPU(s) per replica; ` +
      `${planned.throughput.toFixed(1)} samples/s, ${planned.samplesPerCall} samples a call in ${(planned.timeline.duration * 1e3).toFixed(3)} ms (simulated)`,
  );
  const reports = args.string('report');
  if (reports !== undefined) {
    const written = writeProfileReports(reports, planned.executable);
    for (const file of [written.html, written.json, written.trace]) console.error(`poptfjs plan: wrote ${file}`);
  }
  return planned.fits ? 0 : 1;
}

/**
 * Plans the ONNX model at `path` without reading its weights: for inference, or with `--loss-tensor` a training step
 * of a model exported with its loss (`--optimizer` chooses the optimizer); placed by its PopART attributes, or split
 * into `--ipus` stages; `--batch` is the first dimension of every graph input. With `--search`, the fastest
 * configuration of `--ipus` IPUs at a global batch of `--batch`, its stages named by the model's modules.
 */
async function planOnnxModel(args: VerbArguments, path: string, options: () => Options): Promise<number> {
  if (args.string('loss') !== undefined)
    throw new UsageError('plan: --loss names a tfjs loss for a saved tfjs model; an ONNX model exported with its loss names its loss tensor with --loss-tensor');
  const loss = args.string('loss-tensor');
  if (loss === undefined && args.string('optimizer') !== undefined)
    throw new UsageError('plan: an ONNX model is planned for inference unless --loss-tensor names its loss; --optimizer needs --loss-tensor');
  if (loss !== undefined && args.boolean('inference')) throw new UsageError('plan: --loss-tensor plans a training step; leave out --inference');
  const ipus = args.integer('ipus') ?? 1;
  const optimizer = args.string('optimizer') as PlanOptimizerName | undefined;
  const asked = { ...(loss !== undefined ? { loss, ...(optimizer ? { optimizer } : {}) } : {}), ...(args.boolean('float16') ? { float16: true } : {}) };
  if (args.boolean('search')) return printSearch(args, await autoPlan(path, { ipus, globalBatch: args.integer('batch')!, options: options(), ...asked }));
  const o = options();
  // A pipeline needs a micro-batch for each stage in flight: its attributes' stages, or the split's; a training step
  // needs the 2N - 1 micro-batches of an N-stage pipeline.
  const stages = Math.max(ipus, onnxPipelineStages(path));
  if (stages > 1 && loss !== undefined && args.integer('accumulation') === undefined)
    o.Training.gradientAccumulation(Math.max(o.settings.training.gradientAccumulation, 2 * stages - 1));
  if (stages > 1 && loss === undefined && args.integer('device-iterations') === undefined) o.deviceIterations(Math.max(o.settings.deviceIterations, stages));
  return printPlan(args, await plan(path, { options: o, ipus, batch: args.integer('batch')!, ...asked }));
}

/** What `plan` needs to know of a saved model: its inputs and output for one micro-batch, its compiled loss, its layers. */
interface ModelDescription {
  inputs: PlanInput[];
  output: PlanInput | undefined;
  loss: string | undefined;
  layers: string[];
}

/** Loads the model with shapes only and describes it. */
async function describeModel(load: () => Promise<tf.LayersModel>, batch: number, float16: boolean): Promise<ModelDescription> {
  return withShapeOnlyBackend(async () => {
    const model = await load();
    const withBatch = (shape: ReadonlyArray<number | null>) => [batch, ...shape.slice(1).map((d) => d ?? 1)];
    const description: ModelDescription = {
      inputs: model.inputs.map((t) => ({ shape: withBatch(t.shape), dtype: float16 && t.dtype === 'float32' ? 'float16' : t.dtype })),
      output: model.outputs.length === 1 ? { shape: withBatch(model.outputs[0]!.shape), dtype: float16 ? 'float16' : 'float32' } : undefined,
      loss: typeof model.loss === 'string' ? model.loss : undefined,
      layers: model.layers.filter((l) => l.getClassName() !== 'InputLayer').map((l) => l.name),
    };
    model.dispose();
    return description;
  });
}
