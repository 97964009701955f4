/**
 * `poptfjs plan <model.json> --ipus N --batch B ...`: plans a saved tfjs
 * layers model on simulated IPUs without computing it, and prints its memory
 * per IPU, placement and simulated throughput (the summary report).
 *
 * Options come from a config file (`--config`, read as `Options.loadFromFile`
 * reads it), then the flags. With `--ipus N` above 1 the layers are split
 * into N consecutive pipeline stages of nearly equal simulated time (from a
 * first plan on one IPU).
 */
import { parseArgs } from 'node:util';
import {
  AutoStage,
  BeginBlock,
  half,
  IPU_TARGETS,
  LOSS_NAMES,
  Options,
  PipelinedExecution,
  PLAN_OPTIMIZERS,
  PoptfjsError,
  balancedGroups,
  layerCycles,
  loadLayersModelFile,
  plan,
  type tf,
  withShapeOnlyBackend,
  type IpuTargetName,
  type PlanInput,
  type PlanOptimizerName,
  type PlanRequest,
} from 'poptfjs';

/** The help text of the verb. */
export const PLAN_USAGE = `poptfjs plan <model.json | model dir> --batch B [options]
  plans a saved tfjs layers model on simulated IPUs, without computing it:
  memory per IPU, placement, schedule and simulated throughput

  --batch B              micro-batch size (required)
  --ipus N               IPUs per replica; above 1 the layers are split into N
                         pipeline stages of nearly equal simulated time (default 1)
  --replicas R           replication factor
  --accumulation G       gradient accumulation (default: the config's, at least
                         the 2N-1 micro-batches an N-stage pipeline needs)
  --device-iterations D  device iterations
  --ipu GC200|Bow        the IPU to plan for (default: the config's, else GC200)
  --config FILE          options from a file, as Options.loadFromFile reads it
  --inference            plan inference instead of a training step
  --loss NAME            the training loss (default the model's compiled loss)
  --optimizer NAME       ${Object.keys(PLAN_OPTIMIZERS).join(', ')} (default sgd)
  --float16              hold the weights and inputs in float16`;

function cliError(message: string): PoptfjsError {
  return new PoptfjsError(`plan: ${message}`, { type: 'cli' });
}

function positiveInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw cliError(`${flag} takes a positive integer, got '${value}'`);
  return n;
}

/** Runs `poptfjs plan` with the arguments after the verb. */
export async function planCommand(args: string[]): Promise<void> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    throw cliError(`${(error as Error).message}\n${PLAN_USAGE}`);
  }
  const { values, positionals } = parsed;
  const path = positionals[0];
  if (path === undefined || positionals.length > 1) throw cliError(`give one saved model (model.json or its directory)\n${PLAN_USAGE}`);
  const batch = positiveInteger(values.batch, '--batch');
  if (batch === undefined) throw cliError('give the micro-batch size: --batch B');
  const ipus = positiveInteger(values.ipus, '--ipus') ?? 1;
  const target = values.ipu ?? 'GC200';
  if (!IPU_TARGETS.includes(target as IpuTargetName)) throw cliError(`--ipu takes ${IPU_TARGETS.join(' or ')}, got '${target}'`);
  const optimizer = values.optimizer ?? 'sgd';
  if (!Object.hasOwn(PLAN_OPTIMIZERS, optimizer)) throw cliError(`--optimizer takes one of ${Object.keys(PLAN_OPTIMIZERS).join(', ')}, got '${optimizer}'`);
  if (values.loss !== undefined && !(LOSS_NAMES as readonly string[]).includes(values.loss))
    throw cliError(`--loss takes one of ${LOSS_NAMES.join(', ')}, got '${values.loss}'`);
  const training = !values.inference;

  const options = (groups?: string[][]): Options => {
    const o = new Options();
    if (values.config !== undefined) o.loadFromFile(values.config);
    if (values.ipu !== undefined) o.ipuTarget({ ...o.settings.ipuTarget, ipu: target as IpuTargetName });
    const replicas = positiveInteger(values.replicas, '--replicas');
    if (replicas !== undefined) o.replicationFactor(replicas);
    const iterations = positiveInteger(values['device-iterations'], '--device-iterations');
    if (iterations !== undefined) o.deviceIterations(iterations);
    const accumulation = positiveInteger(values.accumulation, '--accumulation');
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
    if (values.float16) half(model);
    groups?.forEach((layers, ipu) => layers.forEach((name) => BeginBlock(model.getLayer(name), { ipuId: ipu })));
    return model;
  };
  const describe = await describeModel(() => load(), batch, values.float16 === true);
  describe.loss = values.loss ?? describe.loss;
  if (training && describe.loss === undefined) throw cliError(`training needs a loss: give --loss (one of ${LOSS_NAMES.join(', ')}) or plan --inference`);
  if (training && describe.output === undefined)
    throw cliError('training a model with several outputs needs its own loss; plan it with plan() in a program, or plan --inference');
  const request = (o: Options): PlanRequest => ({
    options: o,
    training,
    inputs: describe.inputs,
    ...(training ? { loss: describe.loss!, target: describe.output!, optimizer: optimizer as PlanOptimizerName } : {}),
  });
  let groups: string[][] | undefined;
  if (ipus > 1) {
    const single = await plan(() => load(), request(options()));
    const cycles = layerCycles(single.executable);
    groups = balancedGroups(describe.layers, (name) => cycles.get(name) ?? 0, ipus);
  }
  const planned = await plan(() => load(groups), request(options(groups)));
  console.log(planned.summary());
  console.log(
    `\n${planned.fits ? 'fits' : 'does NOT fit'} on ${planned.memory.ipus.length} IPU(s) per replica; ` +
      `${planned.throughput.toFixed(1)} samples/s, ${planned.samplesPerCall} samples a call in ${(planned.timeline.duration * 1e3).toFixed(3)} ms (simulated)`,
  );
  if (!planned.fits) process.exitCode = 3;
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

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      batch: { type: 'string' },
      ipus: { type: 'string' },
      replicas: { type: 'string' },
      accumulation: { type: 'string' },
      'device-iterations': { type: 'string' },
      ipu: { type: 'string' },
      config: { type: 'string' },
      inference: { type: 'boolean' },
      loss: { type: 'string' },
      optimizer: { type: 'string' },
      float16: { type: 'boolean' },
    },
  });
}
