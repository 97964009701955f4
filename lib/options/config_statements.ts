/**
 * Runs the statements of an options config file against an `Options`.
 *
 * Nothing is evaluated as JavaScript: names resolve against explicit
 * allow-lists only. A statement calls an `Options` method
 * (`deviceIterations(4)`) or a group method (`Training.gradientAccumulation(2)`);
 * its arguments may be literals, lists, dicts (`{"IPU0": 0.3}`), enum members (`OutputMode.All`,
 * `poptorch.enums.CommGroupType.Consecutive`), and the strategy and
 * `TensorLocationSettings` constructors with their own chained methods
 * (`Stage("A").ipu(0)`). `poptorch.` or `poptfjs.` may prefix constructors and
 * enums. Keyword arguments match parameter names ignoring case and
 * underscores, so `output_return_period=2` and `outputReturnPeriod=2` are the same.
 */
import { ParallelPhasedExecutionSpec, PhasedExecutionSpec, SerialPhasedExecutionSpec } from '../strategy/phased_execution.js';
import { PipelinedExecutionSpec, ShardedExecutionSpec } from '../strategy/staged_execution.js';
import { PhaseSpec, StageSpec } from '../strategy/stages_and_phases.js';
import { describeValue } from '../option_vocabulary/argument_rules.js';
import type { CallNode, ExpressionNode, KeywordArgument } from './config_syntax.js';
import { ConfigSourceError, type SourcePosition } from './config_tokens.js';
import { OPTION_ENUMS } from '../option_vocabulary/enums.js';
import type { OptionSetters } from './option_setters.js';
import { TensorLocationSettings } from '../option_vocabulary/tensor_location_settings.js';
import { didYouMean } from '../common/name_suggestion.js';

/** The parameter names of an allowed method, or `variadic` for methods taking any number of positional arguments. */
type Parameters = readonly string[] | 'variadic';

/** The `Options` methods a config file may call, with their parameter names. */
const OPTIONS_METHODS = {
  deviceIterations: ['deviceIterations'],
  replicationFactor: ['replicationFactor'],
  inputReplicaGrouping: ['inputGroupSize', 'inputGroupType'],
  outputMode: ['outputMode', 'outputReturnPeriod'],
  setExecutionStrategy: ['strategy'],
  autoRoundNumIPUs: ['autoRoundNumIpus'],
  useIpuModel: ['useModel'],
  useIpuId: ['ipuId'],
  useOfflineIpuTarget: ['ipuVersion'],
  randomSeed: ['randomSeed'],
  enableExecutableCaching: ['path'],
  enableSyntheticData: ['enabled'],
  logDir: ['logDir'],
  modelName: ['name'],
  connectionType: ['connectionType'],
  syncPattern: ['syncPattern'],
  broadcastBuffers: ['broadcastBuffers'],
  anchorTensor: ['shortName', 'longName', 'outputMode', 'outputReturnPeriod'],
  updatableNamedBuffers: ['buffers'],
  relaxOptimizerAttributesChecks: ['relax'],
  showCompilationProgressBar: ['show'],
  enableProfiling: ['profileDir'],
  backend: ['name'],
  parallelIpus: ['enabled'],
  patterns: ['level', 'overrides'],
  allowOutOfMemory: ['allow'],
  autoRecomputation: ['type'],
  setAvailableMemoryProportion: ['proportions'],
  ipuTarget: ['target'],
} as const satisfies Partial<Record<keyof OptionSetters, Parameters>>;

/** The option groups and the methods a config file may call on each. */
const GROUP_METHODS = {
  Training: {
    gradientAccumulation: ['gradientAccumulation'],
    accumulationAndReplicationReductionType: ['reductionType'],
    setMeanAccumulationAndReplicationReductionStrategy: ['meanReductionStrategy'],
    setAutomaticLossScaling: ['enabled'],
  },
  Precision: {
    setPartialsType: ['dtype'],
    enableStochasticRounding: ['enabled'],
    enableFloatingPointExceptions: ['enabled'],
    halfFloatCasting: ['halfFloatCasting'],
    runningStatisticsAlwaysFloat: ['value'],
  },
  TensorLocations: {
    numIOTiles: ['numTiles'],
    setActivationLocation: ['location'],
    setWeightLocation: ['location'],
    setOptimizerLocation: ['location'],
    setAccumulatorLocation: ['location'],
  },
  Distributed: {
    configureProcessId: ['processId', 'numProcesses'],
    disable: [],
  },
} as const satisfies { readonly [G in 'Training' | 'Precision' | 'TensorLocations' | 'Distributed']: Partial<Record<keyof OptionSetters[G], Parameters>> };

type GroupName = keyof typeof GROUP_METHODS;

/** The constructors a config file may call, by name. */
const CONSTRUCTORS: Readonly<Record<string, { readonly parameters: Parameters; readonly build: (args: unknown[]) => unknown }>> = {
  Stage: { parameters: 'variadic', build: (args) => new StageSpec(...(args as string[])) },
  Phase: { parameters: 'variadic', build: (args) => new PhaseSpec(...(args as string[])) },
  PipelinedExecution: { parameters: 'variadic', build: (args) => new PipelinedExecutionSpec(...(args as string[])) },
  ShardedExecution: { parameters: 'variadic', build: (args) => new ShardedExecutionSpec(...(args as string[])) },
  SerialPhasedExecution: { parameters: 'variadic', build: (args) => new SerialPhasedExecutionSpec(...(args as string[])) },
  ParallelPhasedExecution: { parameters: 'variadic', build: (args) => new ParallelPhasedExecutionSpec(...(args as string[])) },
  TensorLocationSettings: { parameters: [], build: () => new TensorLocationSettings() },
};

/** The methods a config file may chain on the objects the constructors build. */
const OBJECT_METHODS: readonly { readonly is: (value: unknown) => boolean; readonly label: string; readonly methods: Readonly<Record<string, Parameters>> }[] = [
  { is: (value) => value instanceof StageSpec, label: 'Stage', methods: { ipu: ['ipu'] } },
  { is: (value) => value instanceof PhaseSpec, label: 'Phase', methods: { ipus: 'variadic', stage: ['index'] } },
  {
    is: (value) => value instanceof PhasedExecutionSpec,
    label: 'a phased execution strategy',
    methods: {
      phase: ['index'],
      useSeparateBackwardPhase: ['use'],
      sendTensorsOffChipAfterFwd: ['offChip'],
      setTensorsLiveness: ['liveness'],
    },
  },
  {
    is: (value) => value instanceof TensorLocationSettings,
    label: 'TensorLocationSettings',
    methods: {
      minElementsForOffChip: ['minElements'],
      minElementsForReplicatedTensorSharding: ['minElements'],
      useOnChipStorage: ['use'],
      useReplicatedTensorSharding: ['use'],
      useIOTilesToLoad: ['use'],
      useIOTilesToStore: ['use'],
    },
  },
];

const PREFIXES = new Set(['poptorch', 'poptfjs']);

/** A method or constructor a statement may call, with the label its errors use. */
class CallableValue {
  constructor(
    readonly label: string,
    readonly parameters: Parameters,
    readonly invoke: (args: unknown[]) => unknown,
  ) {}
}

function boundMethod(target: object, label: string, method: string, parameters: Parameters): CallableValue {
  const fn = (target as Record<string, (...args: unknown[]) => unknown>)[method] as (...args: unknown[]) => unknown;
  return new CallableValue(label, parameters, (args) => fn.apply(target, args));
}

function normalizeKeyword(name: string): string {
  return name.replace(/_/g, '').toLowerCase();
}

interface NameSegment extends SourcePosition {
  readonly name: string;
}

/** The segments of a dotted name (`poptorch.OutputMode.All`), or undefined if `node` is not one. */
function dottedName(node: ExpressionNode): NameSegment[] | undefined {
  if (node.kind === 'name') return [{ name: node.name, line: node.line, column: node.column }];
  if (node.kind !== 'member') return undefined;
  const head = dottedName(node.object);
  return head === undefined ? undefined : [...head, { name: node.name, line: node.line, column: node.column }];
}

class StatementRunner {
  constructor(private readonly options: OptionSetters) {}

  run(statement: ExpressionNode): void {
    if (statement.kind !== 'call') {
      throw new ConfigSourceError(statement, 'each statement must call an option method, such as deviceIterations(4)');
    }
    const result = this.#evaluate(statement);
    const { options } = this;
    const groups = [options.Training, options.Precision, options.TensorLocations, options.Distributed];
    if (result !== options && !groups.some((group) => group === result)) {
      throw new ConfigSourceError(
        statement,
        `this statement builds ${describeValue(result)} but sets no option; pass it to an option method such as setExecutionStrategy(...)`,
      );
    }
  }

  #evaluate(node: ExpressionNode): unknown {
    switch (node.kind) {
      case 'literal':
        return node.value;
      case 'list':
        return node.items.map((item) => this.#evaluate(item));
      case 'dict': {
        // No prototype: a key such as "__proto__" is an entry like any other.
        const dict: Record<string, unknown> = Object.create(null);
        for (const { key, value } of node.entries) {
          const name = this.#evaluate(key);
          if (typeof name !== 'string' && typeof name !== 'number') throw new ConfigSourceError(key, `a dict key must be a string or a number, got ${describeValue(name)}`);
          if (Object.hasOwn(dict, String(name))) throw new ConfigSourceError(key, `the dict has the key ${JSON.stringify(String(name))} twice`);
          dict[String(name)] = this.#evaluate(value);
        }
        return dict;
      }
      case 'name':
        return this.#resolve(dottedName(node) as NameSegment[]);
      case 'member': {
        const segments = dottedName(node);
        if (segments !== undefined) return this.#resolve(segments);
        return this.#method(this.#evaluate(node.object), node.name, node);
      }
      case 'call':
        return this.#call(node);
    }
  }

  #call(node: CallNode): unknown {
    const callee = this.#evaluate(node.callee);
    if (!(callee instanceof CallableValue)) {
      throw new ConfigSourceError(node, `${describeValue(callee)} cannot be called`);
    }
    const args = this.#bind(callee, node);
    try {
      return callee.invoke(args);
    } catch (error) {
      throw new ConfigSourceError(node, error instanceof Error ? error.message : String(error), error);
    }
  }

  #bind(callee: CallableValue, node: CallNode): unknown[] {
    const args = node.args.map((arg) => this.#evaluate(arg));
    const { parameters } = callee;
    if (parameters === 'variadic') {
      const [keyword] = node.keywords;
      if (keyword !== undefined) throw new ConfigSourceError(keyword, `${callee.label} takes no keyword arguments`);
      return args;
    }
    if (args.length > parameters.length) {
      const extra = node.args[parameters.length] as ExpressionNode;
      const count = parameters.length === 1 ? '1 argument' : `${parameters.length} arguments`;
      throw new ConfigSourceError(extra, `${callee.label} takes at most ${count}, got ${args.length}`);
    }
    const bound: unknown[] = [...args];
    const assigned = new Set(args.map((_, index) => index));
    for (const keyword of node.keywords) {
      const index = parameters.findIndex((parameter) => normalizeKeyword(parameter) === normalizeKeyword(keyword.name));
      if (index < 0) throw this.#unknownKeyword(callee, keyword, parameters);
      if (assigned.has(index)) {
        throw new ConfigSourceError(keyword, `${callee.label} got two values for its parameter ${parameters[index]}`);
      }
      assigned.add(index);
      while (bound.length < index) bound.push(undefined);
      bound[index] = this.#evaluate(keyword.value);
    }
    return bound;
  }

  #unknownKeyword(callee: CallableValue, keyword: KeywordArgument, parameters: readonly string[]): ConfigSourceError {
    const known = parameters.length === 0 ? 'it takes no arguments' : `its parameters are ${parameters.join(', ')}`;
    return new ConfigSourceError(keyword, `${callee.label} has no parameter ${keyword.name}; ${known}`);
  }

  #resolve(segments: readonly NameSegment[]): unknown {
    let rest = segments;
    const prefixed = PREFIXES.has((rest[0] as NameSegment).name);
    if (prefixed) rest = rest.slice(1);
    if (prefixed && rest[0]?.name === 'enums') rest = rest.slice(1);
    const head = rest[0];
    if (head === undefined) {
      const last = segments[segments.length - 1] as NameSegment;
      throw new ConfigSourceError(last, `${segments.map((segment) => segment.name).join('.')} is incomplete; name an option, a constructor or an enum`);
    }
    if (Object.hasOwn(OPTION_ENUMS, head.name)) return this.#enumMember(head, rest.slice(1));
    const [, attribute] = rest;
    if (Object.hasOwn(CONSTRUCTORS, head.name)) {
      if (attribute !== undefined) throw new ConfigSourceError(attribute, `${head.name} has no attribute ${attribute.name}`);
      const callable = CONSTRUCTORS[head.name] as (typeof CONSTRUCTORS)[string];
      return new CallableValue(head.name, callable.parameters, callable.build);
    }
    if (!prefixed && Object.hasOwn(OPTIONS_METHODS, head.name)) {
      if (attribute !== undefined) throw new ConfigSourceError(attribute, `${head.name} has no attribute ${attribute.name}`);
      const name = head.name as keyof typeof OPTIONS_METHODS;
      return boundMethod(this.options, name, name, OPTIONS_METHODS[name]);
    }
    if (!prefixed && Object.hasOwn(GROUP_METHODS, head.name)) {
      let value: unknown = this.options[head.name as GroupName];
      for (const segment of rest.slice(1)) value = this.#method(value, segment.name, segment);
      return value;
    }
    const known = [...Object.keys(OPTIONS_METHODS), ...Object.keys(GROUP_METHODS), ...Object.keys(CONSTRUCTORS), ...Object.keys(OPTION_ENUMS)];
    throw new ConfigSourceError(head, `unknown option or name ${head.name}${didYouMean(head.name, known)}`);
  }

  #enumMember(enumSegment: NameSegment, members: readonly NameSegment[]): string {
    const enumeration = OPTION_ENUMS[enumSegment.name as keyof typeof OPTION_ENUMS] as Readonly<Record<string, string>>;
    const [member, extra] = members;
    const names = Object.keys(enumeration);
    if (member === undefined) {
      throw new ConfigSourceError(
        enumSegment,
        `${enumSegment.name} is an enumeration; name one of its members: ${names.map((name) => `${enumSegment.name}.${name}`).join(', ')}`,
      );
    }
    if (!Object.hasOwn(enumeration, member.name)) {
      throw new ConfigSourceError(member, `${enumSegment.name} has no member ${member.name}; its members are ${names.join(', ')}${didYouMean(member.name, names)}`);
    }
    if (extra !== undefined) throw new ConfigSourceError(extra, `${enumSegment.name}.${member.name} has no attribute ${extra.name}`);
    return enumeration[member.name] as string;
  }

  /** The method `name` of `target`, if the config language allows calling it. */
  #method(target: unknown, name: string, position: SourcePosition): CallableValue {
    const table = this.#methodsOf(target);
    if (table === undefined) {
      throw new ConfigSourceError(position, `${describeValue(target)} has no methods a config file can call (looking up ${name})`);
    }
    const parameters = Object.hasOwn(table.methods, name) ? table.methods[name] : undefined;
    if (parameters === undefined) {
      const names = Object.keys(table.methods);
      throw new ConfigSourceError(position, `unknown method ${name} of ${table.label}${didYouMean(name, names)}; known methods: ${names.join(', ')}`);
    }
    return boundMethod(target as object, `${table.label}.${name}`, name, parameters);
  }

  #methodsOf(target: unknown): { readonly label: string; readonly methods: Readonly<Record<string, Parameters>> } | undefined {
    if (target === this.options) return { label: 'Options', methods: OPTIONS_METHODS };
    for (const group of Object.keys(GROUP_METHODS) as GroupName[]) {
      if (target === this.options[group]) return { label: group, methods: GROUP_METHODS[group] };
    }
    return OBJECT_METHODS.find((entry) => entry.is(target));
  }
}

/**
 * Runs `statements` against `options` in order. Throws a {@link ConfigSourceError}
 * at the first statement that fails; the statements before it are already applied.
 */
export function runConfigStatements(options: OptionSetters, statements: readonly ExpressionNode[]): void {
  const runner = new StatementRunner(options);
  for (const statement of statements) runner.run(statement);
}
