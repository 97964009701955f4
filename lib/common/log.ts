/**
 * Logging, in PopART's format:
 * `<ISO timestamp> poptfjs:<module> <pid>.<thread> <level initial>: <message>`.
 *
 * Each module (`poptfjs`, `session`, `ir`, `devicex`, ...) has its own level.
 * As in PopTorch, the modules are PopTorch's (the front end: `poptfjs`,
 * `trace`, `options`, `data`, ...) or PopART's (`session`, `ir`, `devicex`,
 * `transform`, `pattern`, `builder`, `op`, `ces`), each side at WARN by
 * default: `POPTORCH_LOG_LEVEL` and `setLogLevel` set PopTorch's,
 * `POPART_LOG_LEVEL` and `setPopartLogLevel` PopART's, and
 * `POPTFJS_LOG_LEVEL` (and the root logger's `setLevel`) both.
 * `POPTFJS_LOG_DEST` sends the lines to `stderr` (default), `stdout`
 * or a file. While an executor whose options set `logDir` compiles or runs,
 * its lines are also appended to the file `poptfjs.log` in that directory
 * ({@link withLogFile}).
 * Nothing is ever written to stdout unless asked for.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

/** Log levels from the most to the least verbose. */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERR', 'CRITICAL', 'OFF'] as const;
/** A log level name. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The modules that log, as in PopART. Any other name is accepted too. */
export const LOG_MODULES = ['poptfjs', 'session', 'ir', 'devicex', 'transform', 'pattern', 'builder', 'op', 'ces', 'trace', 'options', 'data'] as const;

/** PopART's modules (its `logging::Module`), whose level `POPART_LOG_LEVEL` and {@link setPopartLogLevel} set; the others are PopTorch's. */
export const POPART_LOG_MODULES: ReadonlySet<string> = new Set(['session', 'ir', 'devicex', 'transform', 'pattern', 'builder', 'op', 'ces']);

/** Which of PopTorch's two logging sides a module is on. */
type LogSide = 'poptorch' | 'popart';

function sideOf(module: string): LogSide {
  return POPART_LOG_MODULES.has(module) ? 'popart' : 'poptorch';
}

const ROOT_MODULE = 'poptfjs';

function parseLevel(level: string, source: string): LogLevel {
  const upper = level.trim().toUpperCase();
  const alias = upper === 'ERROR' ? 'ERR' : upper === 'WARNING' ? 'WARN' : upper === 'TRACE_ALL' ? 'TRACE' : upper === 'DEBUG_IR' ? 'DEBUG' : upper;
  if ((LOG_LEVELS as readonly string[]).includes(alias)) return alias as LogLevel;
  throw new globalThis.Error(`${source}: unknown log level '${level}'; expected one of ${LOG_LEVELS.join(', ')}`);
}

function levelIndex(level: LogLevel): number {
  return LOG_LEVELS.indexOf(level);
}

/** Where log lines go. */
type Sink = (line: string) => void;

function sinkFor(dest: string | undefined): Sink {
  const where = (dest ?? 'stderr').trim();
  if (where === '' || where === 'stderr') return (line) => process.stderr.write(line);
  if (where === 'stdout') return (line) => process.stdout.write(line);
  return (line) => appendFileSync(where, line);
}

function timestamp(): string {
  const micros = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  return `${iso.slice(0, 19)}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
}

/** The logger of one module. Obtain it with {@link getLogger}. */
export class Logger {
  private level: LogLevel | undefined;

  /** @internal Use {@link getLogger}. */
  constructor(
    readonly module: string,
    private readonly registry: LoggerRegistry,
  ) {}

  /** Sets this module's level; on the root logger (`getLogger()`), sets every module's, PopTorch's and PopART's. */
  setLevel(level: LogLevel | string): void {
    const parsed = parseLevel(level, `setLevel(${JSON.stringify(level)})`);
    if (this.module === ROOT_MODULE) this.registry.setAll(parsed);
    else this.level = parsed;
  }

  /** This module's effective level. */
  getLevel(): LogLevel {
    return this.level ?? this.registry.defaults[sideOf(this.module)];
  }

  /** @internal Forget a module-specific level. */
  clearLevel(): void {
    this.level = undefined;
  }

  /** True when a message at `level` would be written. */
  isEnabled(level: LogLevel): boolean {
    return level !== 'OFF' && levelIndex(level) >= levelIndex(this.getLevel());
  }

  /** Writes `message` at `level` if enabled; `message` may be a thunk to avoid work. */
  log(level: LogLevel, message: string | (() => string)): void {
    if (!this.isEnabled(level)) return;
    const text = typeof message === 'function' ? message() : message;
    this.registry.write(`${timestamp()} poptfjs:${this.module} ${process.pid}.${threadId} ${level[0]}: ${text}\n`);
  }

  /** Logs at TRACE. */
  trace(message: string | (() => string)): void {
    this.log('TRACE', message);
  }
  /** Logs at DEBUG. */
  debug(message: string | (() => string)): void {
    this.log('DEBUG', message);
  }
  /** Logs at INFO. */
  info(message: string | (() => string)): void {
    this.log('INFO', message);
  }
  /** Logs at WARN. */
  warn(message: string | (() => string)): void {
    this.log('WARN', message);
  }
  /** Logs at ERR. */
  error(message: string | (() => string)): void {
    this.log('ERR', message);
  }
  /** Logs at CRITICAL. */
  critical(message: string | (() => string)): void {
    this.log('CRITICAL', message);
  }

  /**
   * Writes output the user asked for (a tensor printed by `ops.ipuPrintTensor`)
   * whatever the level, unless the module's level is OFF; the line's level
   * letter is `I`.
   */
  print(message: string | (() => string)): void {
    if (this.getLevel() === 'OFF') return;
    const text = typeof message === 'function' ? message() : message;
    this.registry.write(`${timestamp()} poptfjs:${this.module} ${process.pid}.${threadId} I: ${text}\n`);
  }

  private readonly warnedOnce = new Set<string>();

  /** Logs a warning the first time a given `key` is seen, and never again. */
  warnOnce(key: string, message: string | (() => string)): void {
    if (this.warnedOnce.has(key)) return;
    this.warnedOnce.add(key);
    this.warn(message);
  }
}

class LoggerRegistry {
  /** The level of the modules of each side that have none of their own. */
  readonly defaults: Record<LogSide, LogLevel> = { poptorch: 'WARN', popart: 'WARN' };
  private readonly loggers = new Map<string, Logger>();
  private sink: Sink = sinkFor(undefined);

  constructor() {
    this.configureFromEnv(process.env);
  }

  configureFromEnv(env: NodeJS.ProcessEnv): void {
    const read = (variable: string) => {
      const value = env[variable];
      return value === undefined || value === '' ? undefined : parseLevel(value, variable);
    };
    const both = read('POPTFJS_LOG_LEVEL');
    this.defaults.poptorch = both ?? read('POPTORCH_LOG_LEVEL') ?? 'WARN';
    this.defaults.popart = both ?? read('POPART_LOG_LEVEL') ?? 'WARN';
    this.sink = sinkFor(env.POPTFJS_LOG_DEST);
  }

  get(module: string): Logger {
    let logger = this.loggers.get(module);
    if (!logger) {
      logger = new Logger(module, this);
      this.loggers.set(module, logger);
    }
    return logger;
  }

  /** Sets the level of every module of `sides`, forgetting their own levels. */
  setAll(level: LogLevel, sides: readonly LogSide[] = ['poptorch', 'popart']): void {
    for (const side of sides) this.defaults[side] = level;
    for (const logger of this.loggers.values()) if (sides.includes(sideOf(logger.module))) logger.clearLevel();
  }

  setDestination(dest: string): void {
    this.sink = sinkFor(dest);
  }

  write(line: string): void {
    this.sink(line);
    const file = logFiles.getStore();
    if (file === undefined) return;
    try {
      appendFileSync(file, line);
    } catch (error) {
      if (this.unwritable.has(file)) return;
      this.unwritable.add(file);
      this.sink(
        `${timestamp()} poptfjs:${ROOT_MODULE} ${process.pid}.${threadId} W: cannot append to the log file ${file} (${(error as Error).message}); its lines go to the usual destination only\n`,
      );
    }
  }

  /** Log files that could not be written to, each reported once. */
  private readonly unwritable = new Set<string>();
}

/** The log file of the executor whose work is running (see {@link withLogFile}). */
const logFiles = new AsyncLocalStorage<string>();

const registry = new LoggerRegistry();

/** The logger of `module` (default: the root module, `poptfjs`). */
export function getLogger(module: string = ROOT_MODULE): Logger {
  return registry.get(module);
}

/** PopTorch's legacy integer levels (`setLogLevel(1)` is DEBUG). */
const LEGACY_LEVELS: Readonly<Record<number, LogLevel>> = { 0: 'TRACE', 1: 'DEBUG', 2: 'INFO', 3: 'WARN', 4: 'ERR', 6: 'OFF' };

/**
 * Sets the level of PopTorch's modules (poptfjs's front end: all but
 * PopART's), as PopTorch's `setLogLevel` does: a level name, or one of
 * PopTorch's legacy integers (0 TRACE, 1 DEBUG, 2 INFO, 3 WARN, 4 ERR, 6 OFF).
 */
export function setLogLevel(level: LogLevel | string | number): void {
  if (typeof level === 'number') {
    const named = LEGACY_LEVELS[level];
    if (named === undefined) throw new globalThis.Error(`setLogLevel: Invalid log level integer ${level}; expected 0 (TRACE) to 4 (ERR), or 6 (OFF)`);
    registry.setAll(named, ['poptorch']);
    return;
  }
  const upper = typeof level === 'string' ? level.trim().toUpperCase() : '';
  if (!(LOG_LEVELS as readonly string[]).includes(upper) && !['ERROR', 'WARNING', 'TRACE_ALL', 'DEBUG_IR'].includes(upper)) {
    throw new globalThis.Error(`setLogLevel: Unknown log level: ${String(level)}. Valid values are CRITICAL, DEBUG, ERR, INFO, OFF, TRACE and WARN`);
  }
  registry.setAll(parseLevel(level as string, 'setLogLevel'), ['poptorch']);
}

/** The level names PopTorch's `setPopartLogLevel` takes. */
const POPART_LEVEL_NAMES = ['TRACE', 'TRACE_ALL', 'DEBUG', 'DEBUG_IR', 'INFO', 'WARN', 'ERR', 'OFF'];

/** Sets the level of PopART's modules (`session`, `ir`, `devicex`, ...), as PopTorch's `setPopartLogLevel` does: a level name only. */
export function setPopartLogLevel(level: string): void {
  if (typeof level !== 'string' || !POPART_LEVEL_NAMES.includes(level)) {
    throw new globalThis.Error(`setPopartLogLevel: Level must be one of ${POPART_LEVEL_NAMES.join(', ')}, got ${typeof level === 'string' ? `'${level}'` : String(level)}`);
  }
  registry.setAll(parseLevel(level, 'setPopartLogLevel'), ['popart']);
}

/** Sends log lines to `stderr`, `stdout` or the file at the given path. */
export function setLogDestination(dest: string): void {
  registry.setDestination(dest);
}

/**
 * Runs `fn` with every log line it writes (including lines written by the
 * asynchronous work it starts and awaits) also appended to `file`, as well as
 * going to the usual destination; with `file` undefined, runs `fn` as is.
 */
export function withLogFile<T>(file: string | undefined, fn: () => T): T {
  return file === undefined ? fn() : logFiles.run(file, fn);
}

/** Re-reads `POPTFJS_LOG_LEVEL` (or `POPTORCH_LOG_LEVEL` and `POPART_LOG_LEVEL`) and `POPTFJS_LOG_DEST` (levels set in code are reset). */
export function configureLoggingFromEnv(env: NodeJS.ProcessEnv = process.env): void {
  registry.configureFromEnv(env);
  registry.setAll(registry.defaults.poptorch, ['poptorch']);
  registry.setAll(registry.defaults.popart, ['popart']);
}
