/**
 * Poplar's `Executable`: what `compileGraph` makes and an `Engine` runs, as
 * plain data (lib/executable/executable.ts), and `Executable.fromFile(path)`,
 * which reads one that `compileAndExport` (of an executor or a session)
 * wrote, with what an engine needs to run it alone: the host weights (the
 * exported model's, or zeros for an export without its model, to be written
 * with `writeTensor` or the weight streams), the optimizer it was compiled
 * with, rebuilt over them, and the device state it was exported in. The
 * weights keep the parameters' names unless this process already holds
 * tf.Variables of those names (then the executable names them as the new
 * variables are named).
 */
import * as tf from '@tensorflow/tfjs';
import type { Executable as CompiledExecutable } from '../executable/executable.js';
import { mapDeviceState } from '../executable/device_state.js';
import { renameExecutableParameters } from '../executable/parameter_renaming.js';
import { readExecutableFile } from '../files/executable_file.js';
import { rebuildOptimizer } from '../files/optimizer_reconstruction.js';
import { tensorFromData } from '../files/tensor_data_conversion.js';
import type { EngineHost } from './engine.js';

/** A compiled model: its graph, placement, schedule, hardware analysis and programs. */
export type Executable = CompiledExecutable;

/** An executable read from a file, with the host side an engine made from it starts with. */
export interface ExportedExecutable extends CompiledExecutable {
  readonly exported: {
    /** The file it was read from. */
    readonly path: string;
    /** The host weights, the optimizer and the device state of the export. */
    readonly host: EngineHost;
  };
}

/** Reading executables. */
export const Executable = {
  /**
   * Reads the executable exported to `path` (verified as every poptfjs file
   * is), for `new Engine(executable)`.
   */
  fromFile(path: string): ExportedExecutable {
    const file = readExecutableFile(path);
    // Each weight is a tf.Variable named as the parameter (the optimizer trains variables by name), unless this process holds one of that name already.
    const variables = new Map<string, tf.Variable>();
    for (const p of file.parameters) {
      const data = file.model?.weights.get(p.name);
      const value = data ? tensorFromData(data) : tf.zeros([...p.shape], p.dtype);
      const free = tf.engine().registeredVariables[p.name] === undefined;
      variables.set(p.name, tf.variable(value, p.trainable, free ? p.name : undefined));
      value.dispose();
    }
    const rename = (name: string) => variables.get(name)?.name ?? name;
    const executable = renameExecutableParameters(file.executable, rename);
    const hostWeights = new Map([...variables.values()].map((v) => [v.name, v]));
    const optimizer = executable.kind === 'training' && file.optimizer ? rebuildOptimizer(file.optimizer, (name) => variables.get(name), path) : undefined;
    const initialState = file.deviceState && mapDeviceState(file.deviceState, (t) => t, rename);
    return {
      ...executable,
      exported: { path, host: { hostWeights, ...(optimizer ? { optimizer } : {}), ...(initialState ? { initialState } : {}) } },
    };
  },
};
