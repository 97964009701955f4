/**
 * Poplar's engine creation options, one record each: the type and values
 * Poplar's reference documents for it, and what it does on the simulated
 * engine. An option either acts (`acts` says how; the tests check each) or
 * is recorded (`recorded` says why the simulated engine has nothing for it
 * to change): a recorded option is still checked by its type and values and
 * reported by `Engine.getEngineOptions()`. Options marked `compiles` change
 * what `compileGraph` produces, so they are part of the executable cache key
 * when they come from the environment.
 */

/** The type of an option's value, as Poplar's reference gives it. */
export type OptionValueType =
  | { readonly kind: 'boolean' }
  | { readonly kind: 'integer' }
  | { readonly kind: 'choice'; readonly values: readonly string[] }
  | { readonly kind: 'string' }
  /** A non-negative integer or the word `word` (`auto`, `unlimited`). */
  | { readonly kind: 'integerOr'; readonly word: string };

/** One option: its value type, and what the simulated engine does with it. */
export type OptionSpec = { readonly type: OptionValueType; readonly compiles?: true } & (
  | { readonly acts: string; readonly recorded?: undefined }
  | { readonly recorded: string; readonly acts?: undefined }
);

const BOOLEAN = { kind: 'boolean' } as const;
const INTEGER = { kind: 'integer' } as const;
const STRING = { kind: 'string' } as const;
const choice = (...values: string[]): OptionValueType => ({ kind: 'choice', values });

/** Why the options about how Poplar lays out and links tile code are recorded only. */
const NO_TILE_CODE = 'the simulated IPU runs no tile code: it computes each kernel on the tfjs backend and times it with the cost model';

/** Every engine creation option of Poplar's reference, by name. */
export const ENGINE_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  'debug.allowOutOfMemory': { type: BOOLEAN, compiles: true, acts: 'a model that does not fit still compiles (its report can be read); running it is an out-of-memory error' },
  'debug.computeInstrumentationLevel': {
    type: choice('vertex', 'tile', 'ipu', 'device'),
    acts: 'with debug.instrumentCompute, what each step run of the execution profile records: every vertex (kernel) on its IPU (vertex), or every compute set with its counter on every tile of its IPU (tile), on debug.profilingTile of its IPU (ipu) or of IPU 0 (device)',
  },
  'debug.retainDebugInformation': { type: BOOLEAN, acts: 'must stay "true" while profiling (autoReport.*): "false" with a profile is refused' },
  'debug.cpuMultiThreadExecution': { type: BOOLEAN, acts: '"false" runs every IPU on the main thread: no worker IPUs even with Options.parallelIpus' },
  'debug.instrument': { type: BOOLEAN, acts: 'turns on every debug.instrument* option not set otherwise: the execution profile records runs' },
  'debug.instrumentCompute': { type: BOOLEAN, acts: "the execution profile records each step run's compute sets (see debug.computeInstrumentationLevel)" },
  'debug.instrumentExternalExchange': { type: BOOLEAN, acts: "the execution profile records each step run's exchanges with the host and streaming memory" },
  'debug.instrumentControlFlow': {
    type: BOOLEAN,
    acts: "the execution profile records each step run's loops (device iterations, gradient accumulation), stored on debug.branchRecordTile",
  },
  'debug.outputAllSymbols': { type: BOOLEAN, recorded: `${NO_TILE_CODE}; there are no ELF symbols` },
  'debug.profilingTile': {
    type: INTEGER,
    acts: 'must be a tile of an IPU (checked); the tile that holds the compute-set counters at the ipu and device instrumentation levels',
  },
  'debug.branchRecordTile': { type: INTEGER, acts: 'must be a tile of the device (checked); the tile that holds the control-flow records' },
  'debug.runtimeVerify': { type: BOOLEAN, recorded: 'the simulated engine checks every transfer, tensor and buffer it is given on every run already' },
  'debug.trace': { type: BOOLEAN, recorded: `${NO_TILE_CODE}; there are no edges to trace` },
  'debug.traceFile': { type: STRING, recorded: 'only used with debug.trace, which is recorded only' },
  'debug.verify': { type: BOOLEAN, recorded: 'compiling always checks the memory of every IPU, which is what the verification checks of laid-out variables' },
  'debug.supervisorStackSizeInBytes': { type: INTEGER, recorded: `${NO_TILE_CODE}; it has no stacks` },
  'debug.workerStackSizeInBytes': { type: INTEGER, recorded: `${NO_TILE_CODE}; it has no stacks` },
  'debug.loweredVarDumpFile': {
    type: STRING,
    acts: "writes the lowered variables (each IPU's variables, their tiles and bytes per tile, and what lives off chip) to this file as JSON",
  },
  'opt.maxCompilationThreads': { type: INTEGER, recorded: 'compiling runs on the one JavaScript thread of the process, within any limit' },
  'opt.maxLinkerThreads': { type: INTEGER, recorded: `${NO_TILE_CODE}; nothing is linked` },
  'opt.internalExchangeOptimisationTarget': {
    type: choice('balanced', 'cycles', 'memory'),
    recorded: 'the cost model has one exchange model, which does not trade memory for cycles',
  },
  'opt.enableMultiAccessCopies': { type: BOOLEAN, recorded: `${NO_TILE_CODE}; copies have no access constraints` },
  'opt.limitVertexStateToLower256K': { type: BOOLEAN, recorded: `${NO_TILE_CODE}; vertex state is not laid out` },
  'opt.useAutoloader': { type: BOOLEAN, recorded: 'loading the simulated device has no secondary loader to choose' },
  'opt.enableStreamCopyMerging': { type: BOOLEAN, recorded: 'each stream transfer is one copy already; checked against target.extendedMemory' },
  'target.deterministicWorkers': { type: choice('true', 'false', 'portable'), recorded: 'the simulated workers are deterministic: every run is reproducible from prng.seed' },
  'target.saveArchive': {
    type: STRING,
    acts: 'writes the archive of the per-tile programs (an ar archive, one member per range of tiles running the same program) to this file when compiling',
  },
  'target.gatewayWriteCombining': { type: BOOLEAN, recorded: 'the simulated device has no IPU-Machine gateway' },
  'target.maxStreamCallbackThreadsPerNumaNode': {
    type: { kind: 'integerOr', word: 'auto' },
    recorded: 'stream callbacks are JavaScript functions: they run on the main thread',
  },
  'target.extendedMemory': { type: BOOLEAN, recorded: 'remote buffers have no 16 GiB limit here; requires opt.enableStreamCopyMerging "false" (checked)' },
  'autoReport.all': { type: BOOLEAN, acts: 'every autoReport.output* option not set otherwise' },
  'autoReport.outputGraphProfile': {
    type: BOOLEAN,
    acts: 'writes the compilation reports (JSON, HTML, Chrome trace) to autoReport.directory; implies debug.allowOutOfMemory',
  },
  'autoReport.outputLoweredVars': { type: BOOLEAN, acts: 'writes the lowered variables to lowered_vars.json in autoReport.directory (see debug.loweredVarDumpFile)' },
  'autoReport.outputArchive': { type: BOOLEAN, acts: 'writes the archive to archive.a in autoReport.directory (see target.saveArchive)' },
  'autoReport.outputSerializedGraph': { type: BOOLEAN, recorded: 'the graph is serialized in every exported executable (compileAndExport) and cache entry instead' },
  'autoReport.outputExecutionProfile': { type: BOOLEAN, acts: 'the summary report includes the simulated execution; sets debug.instrument unless it is set' },
  'autoReport.streamAtEachRun': { type: BOOLEAN, recorded: 'the execution profile is kept in memory and read with Engine.getReport()' },
  'autoReport.outputDebugInfo': {
    type: BOOLEAN,
    recorded: 'the debug information of each node (its layer, block and name scope) is in the compilation reports and the executable already',
  },
  'autoReport.executionProfileProgramRunCount': { type: INTEGER, acts: 'how many runs of each program the execution profile keeps' },
  'autoReport.directory': { type: STRING, acts: 'where the autoReport files go (default ".")' },
  'prng.enableStochasticRounding': { type: BOOLEAN, compiles: true, acts: 'float16 results round stochastically' },
  'prng.seed': { type: INTEGER, acts: "seeds the device's random generator" },
};

/** A value's problem against `type`, or undefined if it is one of its values. */
export function optionValueProblem(type: OptionValueType, value: string): string | undefined {
  switch (type.kind) {
    case 'boolean':
      return value === 'true' || value === 'false' ? undefined : 'expected "true" or "false"';
    case 'integer':
      return /^\d+$/.test(value) ? undefined : 'expected a non-negative integer';
    case 'integerOr':
      return /^\d+$/.test(value) || value === type.word ? undefined : `expected a non-negative integer or "${type.word}"`;
    case 'choice':
      return type.values.includes(value) ? undefined : `expected one of ${type.values.join(', ')}`;
    case 'string':
      return undefined;
  }
}
