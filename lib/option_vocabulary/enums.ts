/**
 * The enumerations of PopTorch's options, as string-valued constant objects.
 *
 * Each is both a value (`OutputMode.All`) and a type (`OutputMode`, the union of
 * its values), so options can be written as members or as their plain strings.
 */

/** Which results a model run hands back (PopTorch's `poptorch.OutputMode`). */
export const OutputMode = {
  /** A result for every micro-batch. */
  All: 'All',
  /** Only the result of the last micro-batch. */
  Final: 'Final',
  /** A result every N micro-batches; N is the output return period. */
  EveryN: 'EveryN',
  /** The sum of the results of all the micro-batches. */
  Sum: 'Sum',
  /** `All` for inference models, `Final` for training models. */
  Default: 'Default',
} as const;
/** A member of {@link OutputMode}. */
export type OutputMode = (typeof OutputMode)[keyof typeof OutputMode];

/** How replicas are grouped (PopTorch's `poptorch.enums.CommGroupType`). */
export const CommGroupType = {
  /** All replicas form one group; the group size is ignored. */
  All: 'All',
  /** Groups of consecutive replicas: `{0..k-1}, {k..2k-1}, ...`. */
  Consecutive: 'Consecutive',
  /** Groups orthogonal to the replica order: `{0, N/k, 2N/k, ...}, {1, N/k+1, ...}, ...`. */
  Orthogonal: 'Orthogonal',
  /** Each replica is its own group. */
  NoGrouping: 'NoGrouping',
} as const;
/** A member of {@link CommGroupType}. */
export type CommGroupType = (typeof CommGroupType)[keyof typeof CommGroupType];

/** Which replicas a grouped variable is read back from (`poptorch.enums.VariableRetrievalMode`). */
export const VariableRetrievalMode = {
  /** One value per group, read from the group's first replica. */
  OnePerGroup: 'OnePerGroup',
  /** One value per replica. */
  AllReplicas: 'AllReplicas',
} as const;
/** A member of {@link VariableRetrievalMode}. */
export type VariableRetrievalMode = (typeof VariableRetrievalMode)[keyof typeof VariableRetrievalMode];

/** How gradients are reduced across accumulation steps and replicas (`poptorch.ReductionType`). */
export const ReductionType = {
  /** Add the gradients up. */
  Sum: 'Sum',
  /** Average the gradients. */
  Mean: 'Mean',
  /** Leave the gradients as they are. */
  NoReduction: 'NoReduction',
} as const;
/** A member of {@link ReductionType}. */
export type ReductionType = (typeof ReductionType)[keyof typeof ReductionType];

/** When a mean reduction divides (`poptorch.MeanReductionStrategy`). */
export const MeanReductionStrategy = {
  /** Keep a running mean while accumulating (more stable, slightly slower). */
  Running: 'Running',
  /** Sum while accumulating, divide once at the end (faster, may overflow in half precision). */
  Post: 'Post',
} as const;
/** A member of {@link MeanReductionStrategy}. */
export type MeanReductionStrategy = (typeof MeanReductionStrategy)[keyof typeof MeanReductionStrategy];

/** How IPUs synchronise with each other and the host (`poptorch.SyncPattern`). */
export const SyncPattern = {
  /** Every IPU synchronises on every communication. */
  Full: 'Full',
  /** IPUs synchronise with the host independently of each other. */
  SinglePipeline: 'SinglePipeline',
  /** Groups of IPUs alternate between host I/O and compute without synchronising with each other (refused at compile by the simulated engine). */
  ReplicaAndLadder: 'ReplicaAndLadder',
} as const;
/** A member of {@link SyncPattern}. */
export type SyncPattern = (typeof SyncPattern)[keyof typeof SyncPattern];

/** When to attach to the device (`poptorch.ConnectionType`). */
export const ConnectionType = {
  /** Attach from the start. */
  Always: 'Always',
  /** Attach once the executable is compiled and about to run. */
  OnDemand: 'OnDemand',
  /** Never attach: compile only (running raises an error). */
  Never: 'Never',
} as const;
/** A member of {@link ConnectionType}. */
export type ConnectionType = (typeof ConnectionType)[keyof typeof ConnectionType];

/** How stage ids are derived when a pipeline lists no stages (`poptorch.AutoStage`). */
export const AutoStage = {
  /** The stage id of a block is its IPU id. */
  SameAsIpu: 'SameAsIpu',
  /** Each new block gets the next stage id. */
  AutoIncrement: 'AutoIncrement',
} as const;
/** A member of {@link AutoStage}. */
export type AutoStage = (typeof AutoStage)[keyof typeof AutoStage];

/** Where tensors live between the phases of a phased execution (`poptorch.Liveness`). */
export const Liveness = {
  /** Tensors stay on the IPU for the whole step. */
  AlwaysLive: 'AlwaysLive',
  /** Tensors go to streaming memory after the forward pass. */
  OffChipAfterFwd: 'OffChipAfterFwd',
  /** As `OffChipAfterFwd`, without overlapping the transfers with compute. */
  OffChipAfterFwdNoOverlap: 'OffChipAfterFwdNoOverlap',
  /** Tensors go to streaming memory after every phase. */
  OffChipAfterEachPhase: 'OffChipAfterEachPhase',
} as const;
/** A member of {@link Liveness}. */
export type Liveness = (typeof Liveness)[keyof typeof Liveness];

/**
 * How operations mixing float16 and float32 inputs are cast
 * (PopTorch 2's `poptorch.HalfFloatCastingBehavior`).
 */
export const HalfFloatCastingBehavior = {
  /** Cast every input to float16 (PopTorch 2's default). */
  FloatDowncastToHalf: 'FloatDowncastToHalf',
  /** Promote float16 inputs to float32, as PyTorch and tfjs do (the default here). */
  HalfUpcastToFloat: 'HalfUpcastToFloat',
} as const;
/** A member of {@link HalfFloatCastingBehavior}. */
export type HalfFloatCastingBehavior = (typeof HalfFloatCastingBehavior)[keyof typeof HalfFloatCastingBehavior];

/** The data type of matmul and convolution partial results. */
export const PartialsType = {
  /** 32-bit partials. */
  Float: 'float',
  /** 16-bit partials: less memory, less precision. */
  Half: 'half',
} as const;
/** A member of {@link PartialsType}. */
export type PartialsType = (typeof PartialsType)[keyof typeof PartialsType];

/**
 * PyTorch's floating-point dtypes as PopTorch's options take them
 * (`Precision.setPartialsType(torch.half)`): the partials type each is.
 */
export const TorchDtype = {
  /** `torch.half`: 16-bit. */
  half: 'half',
  /** `torch.float16`: 16-bit. */
  float16: 'half',
  /** `torch.float`: 32-bit. */
  float: 'float',
  /** `torch.float32`: 32-bit. */
  float32: 'float',
} as const satisfies Record<string, PartialsType>;

/** The tfjs backends an {@link Options.backend} call can force. */
export const TfjsBackendName = {
  /** `@tensorflow/tfjs-node` (native TensorFlow). */
  Tensorflow: 'tensorflow',
  /** `@tensorflow/tfjs-backend-wasm`. */
  Wasm: 'wasm',
  /** The plain JavaScript backend. */
  Cpu: 'cpu',
} as const;
/** A member of {@link TfjsBackendName}. */
export type TfjsBackendName = (typeof TfjsBackendName)[keyof typeof TfjsBackendName];

/**
 * The enumerations by name, as written in config files (`OutputMode.All`).
 * Only these names resolve to enum members there.
 */
export const OPTION_ENUMS = {
  OutputMode,
  CommGroupType,
  VariableRetrievalMode,
  ReductionType,
  MeanReductionStrategy,
  SyncPattern,
  ConnectionType,
  AutoStage,
  Liveness,
  HalfFloatCastingBehavior,
  PartialsType,
  torch: TorchDtype,
} as const satisfies Record<string, Record<string, string>>;
