/**
 * What a session is created with: the model, its data flow and device, and
 * optionally the shapes of unknown inputs, the patterns, the session options
 * and a name; and the schema that checks them.
 */
import { z } from 'zod';
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
