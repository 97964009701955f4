/**
 * What `compileGraph` compiles: a graph of the IR (traced from a tfjs model,
 * imported from ONNX, or an executable's own) with what decides how it runs,
 * each part defaulted from the graph itself and the options: the kind
 * (training when an optimizer is given), the input signature (the graph's
 * inputs, one micro-batch each), the micro-batch size (their first
 * dimension) and the execution settings (`Options`).
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph } from '../ir/graph.js';
import { Options } from '../options/options.js';
import type { OptionsSettings } from '../options/options_settings.js';
import type { TensorSignature } from '../executable/executable.js';
import type { ReplicaGrouping } from '../executable/replica_grouping.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { executionSettings, type ExecutionSettings } from './execution_settings.js';

/** A graph to compile, and how. Only `graph` is required. */
export interface ModelGraph {
  /** The graph: its inputs are the model's (then, in training, the loss scale), its outputs the model's; a training graph has a loss and gradients. */
  readonly graph: Graph;
  /** Training or inference; default: training when `optimizer` is given. */
  readonly kind?: 'training' | 'inference';
  /** The name reports and errors give the model; default `graph`. */
  readonly modelName?: string;
  /** The options it runs with (device iterations, replication, strategy, ...); default `new Options()`. */
  readonly options?: Options;
  /** The options' settings, when they differ from `options.settings` (engine options applied); default `options.settings`. */
  readonly settings?: OptionsSettings;
  /** The optimizer a training graph updates its weights with. */
  readonly optimizer?: Optimizer;
  /** Shape and dtype of one micro-batch of each input; default: the graph's inputs (the loss scale not included). */
  readonly inputSignature?: readonly TensorSignature[];
  /** The micro-batch size; default: the first dimension of the first input (1 for a graph without batched inputs). */
  readonly microBatchSize?: number;
  /** Batching, output mode and gradient reduction; default: from the settings. */
  readonly execution?: ExecutionSettings;
  /** Weights split across replica groups, by parameter name; default none. */
  readonly replicaGroupings?: Readonly<Record<string, ReplicaGrouping>>;
  /** The parameters (by name) and inputs (by position) declared float16 (`half`). */
  readonly float16?: { readonly params: ReadonlySet<string>; readonly inputs: ReadonlySet<number> };
  /** The graph flags its float16 values itself (an imported ONNX model, whose tensors have element types): none are inferred. */
  readonly float16Flagged?: boolean;
  /** The name reports give each parameter, by parameter name (default: its own). */
  readonly weightNames?: ReadonlyMap<string, string>;
  /**
   * The executable is only simulated, never run (`plan()`): its schedule
   * lists enough micro-batches to hold every state of the schedule
   * (`periodicSchedule`), so compiling costs the same for any number
   * of micro-batches (default false: every micro-batch is listed, as a run
   * needs).
   */
  readonly simulatedOnly?: boolean;
}

/** A {@link ModelGraph} with every part decided. */
export interface ResolvedModelGraph extends ModelGraph {
  readonly kind: 'training' | 'inference';
  readonly modelName: string;
  readonly settings: OptionsSettings;
  readonly inputSignature: readonly TensorSignature[];
  readonly microBatchSize: number;
  readonly execution: ExecutionSettings;
  readonly replicaGroupings: Readonly<Record<string, ReplicaGrouping>>;
}

/** `model` with its defaults filled in; an error for a training graph without a loss or optimizer. */
export function resolveModelGraph(model: ModelGraph): ResolvedModelGraph {
  const { graph } = model;
  const kind = model.kind ?? (model.optimizer ? 'training' : 'inference');
  const modelName = model.modelName ?? 'graph';
  if (kind === 'training' && (graph.roles.loss === undefined || graph.roles.lossScale === undefined)) {
    throw new PoptfjsError(`compileGraph: '${modelName}' is compiled for training, but its graph has no loss (a graph traced or imported for training has one)`, {
      type: 'options',
    });
  }
  if (kind === 'training' && !model.optimizer) throw new PoptfjsError(`compileGraph: '${modelName}' is compiled for training without an optimizer`, { type: 'options' });
  const settings = model.settings ?? (model.options ?? new Options()).settings;
  const inputSignature =
    model.inputSignature ?? graph.inputs.filter((id) => id !== graph.roles.lossScale).map((id) => ({ shape: [...graph.values[id]!.shape], dtype: graph.values[id]!.dtype }));
  const microBatchSize = model.microBatchSize ?? inputSignature[0]?.shape[0] ?? 1;
  return {
    ...model,
    kind,
    modelName,
    settings,
    inputSignature,
    microBatchSize,
    execution: model.execution ?? executionSettings(settings, kind === 'training'),
    replicaGroupings: model.replicaGroupings ?? {},
  };
}
