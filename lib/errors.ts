/**
 * The errors poptfjs throws. Every error a user can see is one of these, or a
 * standard JavaScript error whose message says what to do.
 *
 * They mirror PopTorch's hierarchy: {@link PoptfjsError} (exported as `Error`)
 * for application errors, {@link RecoverableError} and {@link UnrecoverableError}
 * for (simulated) runtime faults of the device.
 */

/** Where an error was raised: a source file, a layer, a kernel, a config line. */
export type ErrorLocation = string;

/**
 * The base class of poptfjs errors (`poptfjs.Error`).
 *
 * `message` is the message without context, `type` names the part of the stack
 * that raised it and its category, `location` says where it was raised.
 */
export class PoptfjsError extends globalThis.Error {
  /** The part of poptfjs that raised the error and its category, e.g. `trace`. */
  readonly type: string;
  /** Where the error was raised (a layer, a kernel, a file and line), or ''. */
  readonly location: ErrorLocation;

  constructor(message: string, options: { type?: string; location?: ErrorLocation; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.type = options.type ?? 'poptfjs';
    this.location = options.location ?? '';
  }

  /** The message with the error's type and location, as printed. */
  override toString(): string {
    const where = this.location ? ` (at ${this.location})` : '';
    return `${this.name} [${this.type}]: ${this.message}${where}`;
  }
}

/** The action that recovers from a {@link RecoverableError}, as in Poplar. */
export type RecoveryAction = 'IPU_RESET' | 'LINK_RESET' | 'PARTITION_RESET' | 'FULL_RESET';

/** A transient device fault: perform `recoveryAction`, then carry on. */
export class RecoverableError extends PoptfjsError {
  /** What must be done before the device can be used again. */
  readonly recoveryAction: RecoveryAction;

  constructor(message: string, recoveryAction: RecoveryAction, options: { location?: ErrorLocation } = {}) {
    super(message, { type: 'poplar_recoverable_runtime_error', ...options });
    this.recoveryAction = recoveryAction;
  }
}

/** A persistent device fault: the device must be taken out of operation. */
export class UnrecoverableError extends PoptfjsError {
  constructor(message: string, options: { location?: ErrorLocation } = {}) {
    super(message, { type: 'poplar_unrecoverable_runtime_error', ...options });
  }
}

/** A configuration file that could not be parsed or applied. */
export class ConfigFileError extends PoptfjsError {
  /** The file that holds the error. */
  readonly file: string;
  /** 1-based line of the error. */
  readonly line: number;
  /** 1-based column of the error. */
  readonly column: number;

  constructor(file: string, line: number, column: number, message: string, cause?: unknown) {
    super(`${file}:${line}:${column}: ${message}`, { type: 'config_file', location: `${file}:${line}:${column}`, cause });
    this.file = file;
    this.line = line;
    this.column = column;
  }
}
