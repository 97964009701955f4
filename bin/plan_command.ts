/**
 * `poptfjs plan <model.json> --ipus N --batch B ...`: plans a saved tfjs
 * layers model on simulated IPUs without computing it, and prints its memory
 * per IPU, placement and simulated throughput (the summary report).
 *
 * Options come from a config file (`--config`, read as `Options.loadFromFile`
 * reads it), then the flags. With `--ipus N` above 1 the layers are split
 * into N consecutive pipeline stages of nearly equal simulated time (from a
 * first plan on one IPU). With `--report DIR` the reports (HTML, JSON and
 * Chrome trace) are written there too, each file named on stderr.
 */
import {
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
  plan,
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
  const load = async (groups?: string[][]) => {
    const model = await loadLayersModelFile(path);
    if (float16) half(model);
    groups?.forEach((layers, ipu) => layers.forEach((name) => BeginBlock(model.getLayer(name), { ipuId: ipu })));
    return model;
  };
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
  let groups: string[][] | undefined;
  if (ipus > 1) {
    const single = await plan(() => load(), request(options()));
    const cycles = layerCycles(single.executable);
    groups = balancedGroups(describe.layers, (name) => cycles.get(name) ?? 0, ipus);
  }
  const planned = await plan(() => load(groups), request(options(groups)));
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
