/**
 * What a session is created with: the model, its data flow and device, and
 * optionally the shapes of unknown inputs, the patterns, the session options
 * and a name; and the schema that checks them.
 */
import { z } from 'zod';
import { PopartException } from '../common/errors.js';
import { didYouMean } from '../common/name_suggestion.js';
import { Device } from '../ipu/device.js';
import { Patterns } from '../ir/patterns/patterns.js';
import type { Executable } from '../executable/executable.js';
import { DataFlow } from './data_flow.js';
import type { ModelSource } from './model_source.js';
import type { SessionOptions } from './session_options.js';

/** Shapes of graph inputs whose shapes the model leaves unknown, by input name (PopART's `InputShapeInfo`). */
export type InputShapeInfo = Readonly<Record<string, readonly number[]>> | ReadonlyMap<string, readonly number[]>;

/** What every session is created with. */
export interface SessionArguments {
  /** The ONNX model: a file path, the bytes of a `ModelProto` (e.g. `builder.getModelProto()`), or a `ModelProto`. */
  readonly model: ModelSource;
  /** The batches per step and the anchors. */
  readonly dataFlow: DataFlow;
  /** The device to run on (from a `DeviceManager`). */
  readonly deviceInfo: Device;
  /** Shapes of inputs the model leaves unknown. */
  readonly inputShapeInfo?: InputShapeInfo;
  /** The graph rewrites to run (default: `new Patterns('Default')`). */
  readonly patterns?: Patterns;
  /** The session options. */
  readonly userOptions?: SessionOptions | Partial<SessionOptions>;
  /** The session's name in reports (default `inference` or `training`). */
  readonly name?: string;
}

/** PopART's keyword names where they differ from poptfjs's: `fnModel`, and the older edition's `dataFeed`. */
export const POPART_ARGUMENT_NAMES: Readonly<Record<string, string>> = { fnModel: 'model', dataFeed: 'dataFlow' };

/** The arguments of a session as PopART names them (`fnModel`, `dataFeed`) or as poptfjs does. */
export type PopartArguments<A extends SessionArguments> = Omit<A, 'model' | 'dataFlow'> &
  ({ readonly model: ModelSource } | { readonly fnModel: ModelSource }) &
  ({ readonly dataFlow: DataFlow } | { readonly dataFeed: DataFlow });

const SESSION_ARGUMENT_NAMES = ['model', 'dataFlow', 'deviceInfo', 'inputShapeInfo', 'patterns', 'userOptions', 'name'];

/**
 * The arguments `given` under poptfjs's names: PopART's names understood,
 * and an error naming any other unknown key (with the name it is closest
 * to), a key given under both its names, or a missing model, data flow or
 * device. `extra` are the arguments of the session kind (`loss`, `optimizer`).
 */
export function sessionArguments<A extends SessionArguments>(given: PopartArguments<A>, where: string, extra: readonly string[] = []): A {
  if (typeof given !== 'object' || given === null) throw new PopartException(`${where}: expected the session's arguments as an object, e.g. { model, dataFlow, deviceInfo }`);
  const known = [...SESSION_ARGUMENT_NAMES, ...extra];
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(given)) {
    const name = POPART_ARGUMENT_NAMES[key] ?? key;
    if (!known.includes(name)) {
      throw new PopartException(
        `${where}: '${key}' is not an argument of the session${didYouMean(key, [...known, ...Object.keys(POPART_ARGUMENT_NAMES)])}; the arguments are ${known.join(', ')}`,
      );
    }
    if (name in args)
      throw new PopartException(
        `${where}: '${key}' and '${name === key ? Object.keys(POPART_ARGUMENT_NAMES).find((k) => POPART_ARGUMENT_NAMES[k] === key) : name}' are the same argument; give one`,
      );
    args[name] = value;
  }
  for (const name of ['model', 'dataFlow', 'deviceInfo']) {
    if (args[name] === undefined) {
      const popart = Object.keys(POPART_ARGUMENT_NAMES).find((k) => POPART_ARGUMENT_NAMES[k] === name);
      throw new PopartException(`${where}: no ${name}${popart ? ` (PopART's ${popart})` : ''} was given`);
    }
  }
  return args as A;
}

/** The schema of {@link SessionArguments}: an error names the bad argument and what is expected. */
export const sessionArgumentsSchema = z.object({
  model: z.unknown(),
  dataFlow: z.instanceof(DataFlow, { message: 'expected a DataFlow, e.g. new DataFlow(1, { output: AnchorReturnType("All") })' }),
  deviceInfo: z.instanceof(Device, { message: 'expected a device from a DeviceManager, e.g. new DeviceManager().createCpuDevice()' }),
  inputShapeInfo: z.union([z.record(z.string(), z.array(z.number().int().nonnegative())), z.map(z.string(), z.array(z.number().int().nonnegative()))]).optional(),
  patterns: z.instanceof(Patterns, { message: "expected Patterns, e.g. new Patterns('Default')" }).optional(),
  userOptions: z.object({}).passthrough().optional(),
  name: z.string().min(1).optional(),
});

/** What a subclass gives the session it creates. */
export interface SessionSetup {
  readonly args: SessionArguments;
  readonly kind: Executable['kind'];
  /** For training: the loss's tensor name. */
  readonly loss?: string;
}
