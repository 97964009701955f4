/**
 * The verbs of the `poptfjs` command and what each takes: the one table the
 * parser, the help texts and the documentation test read. Loading it loads
 * no tfjs, so a command line is checked in a moment.
 */
import { IPU_TARGETS } from '../lib/ipu/target_spec.js';
import { LOSS_ALIASES, LOSS_NAMES } from '../lib/trace/loss_names.js';
import type { VerbSpec } from './cli_arguments.js';

/** The optimizers `plan` builds by name (`PLAN_OPTIMIZERS`; a test keeps the two lists the same). */
export const PLAN_OPTIMIZER_NAMES = ['sgd', 'adam', 'adamw', 'rmsprop', 'lamb'] as const;

/** `poptfjs env`. */
export const ENV_VERB: VerbSpec = {
  name: 'env',
  summary: 'print the versions of poptfjs, tfjs and node, and the tfjs backend poptfjs computes on here',
  positionals: [],
  flags: [],
};

/** `poptfjs inspect`. */
export const INSPECT_VERB: VerbSpec = {
  name: 'inspect',
  summary: 'print what an exported executable or a checkpoint holds, without running it',
  positionals: [{ name: 'file', required: true, help: 'an exported executable (compileAndExport) or a checkpoint (saveCheckpoint)' }],
  flags: [],
  notes:
    'An executable: version, model, signature, batching, the options that differ from the defaults,\nstrategy and placement, memory per IPU and simulated time. A checkpoint: parameters, optimizer\nstate, random generator and iterations. The file is verified (hash and version) and never run.',
};

/** `poptfjs cache ls`. */
export const CACHE_LS_VERB: VerbSpec = {
  name: 'cache ls',
  summary: 'list the entries of an executable cache directory and the temporary files of interrupted writes',
  positionals: [{ name: 'dir', required: false, help: 'the cache directory (default: $POPTFJS_CACHE_DIR)' }],
  flags: [],
};

/** `poptfjs cache clear`. */
export const CACHE_CLEAR_VERB: VerbSpec = {
  name: 'cache clear',
  summary: 'remove the entries of an executable cache directory and the temporary files of interrupted writes',
  positionals: [{ name: 'dir', required: false, help: 'the cache directory (default: $POPTFJS_CACHE_DIR)' }],
  flags: [],
  notes: 'Locks held by running processes and files being written are kept.',
};

/** `poptfjs cache` alone: its subverbs. */
export const CACHE_VERBS: readonly VerbSpec[] = [CACHE_LS_VERB, CACHE_CLEAR_VERB];

/** `poptfjs plan`. */
export const PLAN_VERB: VerbSpec = {
  name: 'plan',
  summary: 'plan a saved tfjs layers model or an ONNX model on simulated IPUs without computing it',
  positionals: [
    {
      name: 'model',
      required: true,
      help: 'model.json of a saved layers model, or its directory, or a\nmodel.onnx (its weights never read; planned for inference\nunless --loss-tensor names its loss)',
    },
  ],
  flags: [
    { name: 'batch', value: 'B', integer: true, required: true, help: 'micro-batch size (with --search: the global batch,\nmicro-batch × replicas × accumulation)' },
    {
      name: 'ipus',
      value: 'N',
      integer: true,
      help: 'IPUs per replica; above 1 the model is split into N\npipeline stages of nearly equal simulated time (default 1;\nwith --search: all the IPUs, replicas included)',
    },
    { name: 'replicas', value: 'R', integer: true, help: 'replication factor' },
    { name: 'accumulation', value: 'G', integer: true, help: "gradient accumulation (default: the config's, at least\nthe 2N-1 micro-batches an N-stage pipeline needs)" },
    { name: 'device-iterations', value: 'D', integer: true, help: 'device iterations' },
    { name: 'ipu', value: 'TARGET', choices: IPU_TARGETS, help: `the IPU to plan for: ${IPU_TARGETS.join(' or ')} (default: the config's, else GC200)` },
    { name: 'config', value: 'FILE', help: 'options from a file, as Options.loadFromFile reads it' },
    { name: 'inference', help: 'plan inference instead of a training step' },
    {
      name: 'loss',
      value: 'NAME',
      choices: [...LOSS_NAMES, ...Object.keys(LOSS_ALIASES)],
      help: `the training loss (default: the model's compiled loss): a tfjs loss name\n(meanSquaredError, categoricalCrossentropy, ...) or ${Object.keys(LOSS_ALIASES).join(', ')}`,
    },
    {
      name: 'loss-tensor',
      value: 'NAME',
      help: "an ONNX model's loss tensor: plans a training step of a model\nexported with its loss (PyTorch's cross_entropy, ...)",
    },
    { name: 'optimizer', value: 'NAME', choices: PLAN_OPTIMIZER_NAMES, help: `${PLAN_OPTIMIZER_NAMES.join(', ')} (default: the model's compiled one, else sgd)` },
    { name: 'float16', help: 'hold the weights and inputs in float16' },
    {
      name: 'search',
      help: 'search for the fastest configuration that fits: pipeline split,\nreplicas, micro-batch, accumulation, device iterations,\nrecomputation, optimizer state, memory proportions (autoPlan)',
    },
    { name: 'report', value: 'DIR', help: "also write the reports (HTML, JSON, Chrome trace) into DIR\n(with --search: the search's chart, and the best's reports)" },
  ],
  notes:
    'Prints the memory of each IPU, the placement, the schedule and the simulated throughput; with\n--search, the configurations that fit ranked by throughput, why the best wins, and the best as a\nconfig file (--config reads it).\nExit status: 0 when the model fits, 1 when it does not (or planning failed), 2 for a usage error.',
};

/** `poptfjs run`. */
export const RUN_VERB: VerbSpec = {
  name: 'run',
  summary: 'run a command as N instances of one data-parallel run over MPI, as PopRun does',
  positionals: [],
  command: true,
  flags: [
    { name: 'num-instances', value: 'N', integer: true, required: true, help: 'instances to run' },
    { name: 'num-replicas', value: 'R', integer: true, required: true, help: 'replicas over all instances, R/N each' },
    {
      name: 'ipus-per-replica',
      value: 'K',
      integer: true,
      help: "IPUs each replica uses (default 1); each host's instances\nmay use up to POPTFJS_NUM_IPUS IPUs (default 16)",
    },
    { name: 'host', value: 'h1,h2,...', help: 'hosts to run on, the instances split over them in blocks\n(default: this host)' },
    { name: 'mpi-args', value: '"..."', dashedValue: true, help: 'more arguments for mpiexec' },
    { name: 'output-dir', value: 'DIR', help: "write instance i's output to DIR/instance-<i>.log instead\nof prefixing its lines with [<i>]" },
    { name: 'kill-after', value: 'S', integer: true, help: 'seconds an instance has to end after SIGTERM, SIGINT or SIGHUP\nbefore it is killed (default 5)' },
  ],
  notes:
    "The instances are host processes started by the system's mpiexec (MPICH or Open MPI), R/N replicas\neach; each finds its place in the run with poptfjs's popdist API. The first instance to fail ends\nthe others; poptfjs run then exits with its status. SIGINT and SIGTERM are passed on to the\ninstances, and SIGHUP ends the run as SIGTERM does.",
};

/** Every verb, in the order the help lists them. */
export const VERBS: readonly VerbSpec[] = [ENV_VERB, INSPECT_VERB, CACHE_LS_VERB, CACHE_CLEAR_VERB, PLAN_VERB, RUN_VERB];
