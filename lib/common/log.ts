/**
 * Logging, in PopART's format:
 * `<ISO timestamp> poptfjs:<module> <pid>.<thread> <level initial>: <message>`.
 *
 * Each module (`poptfjs`, `session`, `ir`, `devicex`, ...) has its own level.
 * The default level is WARN; `POPTFJS_LOG_LEVEL` changes it (PopTorch's
 * `POPTORCH_LOG_LEVEL`, then PopART's `POPART_LOG_LEVEL`, are honoured as
 * aliases when it is not set) and `POPTFJS_LOG_DEST` sends the lines to `stderr` (default), `stdout`
 * or a file. While an executor whose options set `logDir` compiles or runs,
 * its lines are also appended to the file `poptfjs.log` in that directory
 * ({@link withLogFile}).
 * Nothing is ever written to stdout unless asked for.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { environmentSetting } from './environment.js';

/** Log levels from the most to the least verbose. */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERR', 'CRITICAL', 'OFF'] as const;
/** A log level name. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The modules that log, as in PopART. Any other name is accepted too. */
export const LOG_MODULES = ['poptfjs', 'session', 'ir', 'devicex', 'transform', 'pattern', 'builder', 'op', 'ces', 'trace', 'options', 'data'] as const;

const ROOT_MODULE = 'poptfjs';

function parseLevel(level: string, source: string): LogLevel {
  const upper = level.trim().toUpperCase();
  const alias = upper === 'ERROR' ? 'ERR' : upper === 'WARNING' ? 'WARN' : upper === 'TRACE_ALL' ? 'TRACE' : upper;
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

  /** Sets this module's level; on the root logger (`getLogger()`), sets every module's. */
  setLevel(level: LogLevel | string): void {
    const parsed = parseLevel(level, `setLevel(${JSON.stringify(level)})`);
    if (this.module === ROOT_MODULE) this.registry.setAll(parsed);
    else this.level = parsed;
  }

  /** This module's effective level. */
  getLevel(): LogLevel {
    return this.level ?? this.registry.defaultLevel;
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
  defaultLevel: LogLevel = 'WARN';
  private readonly loggers = new Map<string, Logger>();
  private sink: Sink = sinkFor(undefined);

  constructor() {
    this.configureFromEnv(process.env);
  }

  configureFromEnv(env: NodeJS.ProcessEnv): void {
    const level = environmentSetting('POPTFJS_LOG_LEVEL', env);
    this.defaultLevel = level ? parseLevel(level.value, level.variable) : 'WARN';
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

  setAll(level: LogLevel): void {
    this.defaultLevel = level;
    for (const logger of this.loggers.values()) logger.clearLevel();
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

/** Sets the level of every module, like PopTorch's `setLogLevel`. */
export function setLogLevel(level: LogLevel | string): void {
  registry.setAll(parseLevel(level, `setLogLevel(${JSON.stringify(level)})`));
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

/** Re-reads `POPTFJS_LOG_LEVEL` (or `POPTORCH_LOG_LEVEL`, `POPART_LOG_LEVEL`) and `POPTFJS_LOG_DEST` (levels set in code are reset). */
export function configureLoggingFromEnv(env: NodeJS.ProcessEnv = process.env): void {
  registry.configureFromEnv(env);
  registry.setAll(registry.defaultLevel);
}
