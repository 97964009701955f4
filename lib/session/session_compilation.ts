/**
 * Compiling a session's placed graph into its executable, once: on the
 * shared compile path (patterns, placement, schedule, memory and time), or
 * from the executable cache with `enableEngineCaching`, or from the file
 * `compileAndExport` wrote and `loadExecutable` reads.
 */
import type * as tf from '@tensorflow/tfjs';
import { PopartRuntimeError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { executableCacheKey } from '../compile/executable_cache_key.js';
import { compileGraph } from '../compile/graph_compiler.js';
import { resolveModelGraph, type ResolvedModelGraph } from '../compile/model_graph.js';
import { executableCache } from '../files/executable_cache.js';
import { readExecutableFile, writeExecutableFile } from '../files/executable_file.js';
import type { Graph } from '../ir/graph.js';
import type { Options } from '../options/options.js';
import type { Executable, TensorSignature } from '../executable/executable.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { executableFileContents, sessionExecutableFromFile, type SessionGraph } from './session_executable_file.js';
import type { SessionSettings } from './session_options.js';

const log = getLogger('session');

/** What a session compiles and how. */
export interface SessionCompilationSetup {
  readonly kind: Executable['kind'];
  /** The session's name in reports. */
  readonly name: string;
  /** The placed graph. */
  readonly graph: Graph;
  readonly inputSignature: TensorSignature[];
  /** The micro-batch (first) dimension of the inputs. */
  readonly microBatch: number;
  /** The host weights by IR parameter name. */
  readonly variables: ReadonlyMap<string, tf.Variable>;
  /** The options the session compiles with. */
  readonly options: Options;
  /** The checked session options (engine caching and its path). */
  readonly settings: SessionSettings;
  /** The poptfjs optimizer the session trains with at the time of compiling. */
  readonly optimizer: () => Optimizer | undefined;
}

/** A session's executable: compiled (or read) once, then kept. */
export class SessionCompilation {
  private compiled: Executable | undefined;

  constructor(private readonly setup: SessionCompilationSetup) {}

  /** The executable, once compiled or loaded. */
  get executable(): Executable | undefined {
    return this.compiled;
  }

  /** The executable: compiled now (or taken from the cache) unless it already is. */
  async compile(): Promise<Executable> {
    if (this.compiled) return this.compiled;
    const { settings } = this.setup;
    const request = this.compileRequest();
    if (!settings.enableEngineCaching) {
      this.compiled = this.compileNow(request);
      return this.compiled;
    }
    const key = executableCacheKey(request, this.setup.options.toJSON());
    const { executable, source } = await executableCache.obtain({ memory: key, disk: key }, settings.cachePath, () =>
      executableFileContents(this.sessionGraph(), this.compileNow(request)),
    );
    log.info(`executable of '${this.setup.name}' from the ${source === 'compiled' ? 'compiler (now cached)' : source} (${settings.cachePath})`);
    this.compiled = { ...executable, modelName: this.setup.name };
    return this.compiled;
  }

  /** Compiles (unless compiled) and writes the executable to `path`, for `loadExecutable`. */
  async exportTo(path: string): Promise<void> {
    const executable = await this.compile();
    writeExecutableFile(path, executableFileContents(this.sessionGraph(), executable));
    log.info(`exported the executable of '${this.setup.name}' to ${path}`);
  }

  /** Takes the executable `exportTo` wrote to `path` instead of compiling; an error once compiled. */
  loadFrom(path: string): void {
    if (this.compiled) throw new PopartRuntimeError('loadExecutable: the session is already compiled; load the executable before prepareDevice()');
    this.compiled = sessionExecutableFromFile(path, readExecutableFile(path), this.sessionGraph());
    log.info(`loaded the executable of '${this.setup.name}' from ${path}`);
  }

  /** What is compiled, for the executable file and cache. */
  private sessionGraph(): SessionGraph {
    const { kind, graph, inputSignature, variables, options } = this.setup;
    return { kind, graph, inputSignature, variables, options, optimizer: this.setup.optimizer() };
  }

  private compileRequest(): ResolvedModelGraph {
    const { kind, name, graph, inputSignature, microBatch, options } = this.setup;
    const optimizer = this.setup.optimizer();
    return resolveModelGraph({
      kind,
      modelName: name,
      graph,
      inputSignature,
      microBatchSize: microBatch,
      options,
      ...(optimizer ? { optimizer } : {}),
      float16Flagged: true,
    });
  }

  private compileNow(request: ResolvedModelGraph): Executable {
    const started = performance.now();
    // The session's engine options are compileGraph's: the files they ask for are written while compiling.
    const executable = compileGraph(request, undefined, this.setup.settings.engineOptions);
    log.info(
      () =>
        `compiled '${this.setup.name}' for ${this.setup.kind} in ${(performance.now() - started).toFixed(1)} ms: ${executable.graph.nodes.length} nodes on ${executable.placement.ipusReserved} IPU(s)`,
    );
    return executable;
  }
}
