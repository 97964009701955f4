/**
 * The errors poptfjs throws. Every error a user can see is one of these, or a
 * standard JavaScript error whose message says what to do.
 *
 * They mirror PopTorch's hierarchy: {@link PoptfjsError} (exported as `Error`)
 * for application errors, {@link RecoverableError} and {@link UnrecoverableError}
 * for (simulated) runtime faults of the device. PopART's hierarchy is built on
 * the same classes, so a fault caught as `RecoverableError` is also a
 * `poplar_recoverable_runtime_error`:
 *
 * ```
 * PoptfjsError
 * ├─ PopartException (popart_exception)
 * │  ├─ PopartInternalException (popart_internal_exception)
 * │  └─ PopartRuntimeError (popart_runtime_error)
 * ├─ PoplibsException (poplibs_exception)
 * └─ PoplarException (poplar_exception)
 *    └─ PoplarRuntimeError (poplar_runtime_error)
 *       ├─ PoplarApplicationRuntimeError (poplar_application_runtime_error)
 *       └─ PoplarSystemRuntimeError (poplar_system_runtime_error)
 *          ├─ RecoverableError (poplar_recoverable_runtime_error)
 *          ├─ UnrecoverableError (poplar_unrecoverable_runtime_error)
 *          └─ PoplarUnknownRuntimeError (poplar_unknown_runtime_error)
 * ```
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

/** The options every error of the hierarchy takes. */
export interface PoptfjsErrorOptions {
  /** The part of poptfjs that raised the error and its category (each class has its default). */
  type?: string;
  /** Where the error was raised. */
  location?: ErrorLocation;
  /** The error that caused this one. */
  cause?: unknown;
}

/**
 * PopART's `popart_exception`: an error in the program using the PopART API
 * or in the model it gives (a wrong buffer size, an unknown tensor name, an
 * invalid option).
 */
export class PopartException extends PoptfjsError {
  constructor(message: string, options: PoptfjsErrorOptions = {}) {
    super(message, { type: 'popart_exception', ...options });
  }
}

/** PopART's `popart_internal_exception`: poptfjs broke one of its own rules (a bug to report). */
export class PopartInternalException extends PopartException {
  constructor(message: string, options: PoptfjsErrorOptions = {}) {
    super(message, { type: 'popart_internal_exception', ...options });
  }
}

/** PopART's `popart_runtime_error`: a session used in a state that does not allow it (not prepared, weights lost). */
export class PopartRuntimeError extends PopartException {
  constructor(message: string, options: PoptfjsErrorOptions = {}) {
    super(message, { type: 'popart_runtime_error', ...options });
  }
}

/** PopART's `poplibs_exception`: a library operation refused its arguments. */
export class PoplibsException extends PoptfjsError {
  constructor(message: string, options: PoptfjsErrorOptions = {}) {
    super(message, { type: 'poplibs_exception', ...options });
  }
}

/** PopART's `poplar_exception`: an error of the (simulated) Poplar engine. */
export class PoplarException extends PoptfjsError {
  constructor(message: string, options: PoptfjsErrorOptions = {}) {
    super(message, { type: 'poplar_exception', ...options });
  }
}

/** One of the errors a failed run reports (an entry of Poplar's `runtime_error::errors`). */
export interface RuntimeErrorEntry {
  /** The kind of error (a simulated one's `SimulatedErrorCode`). */
  readonly code: string;
  /** True for an error planted with `insertSimulatedError`. */
  readonly isSimulated: boolean;
  /** Where it happened: the location it was planted at (the same object). */
  readonly location: object;
}

/** The options of the runtime errors: those of every error, and the errors the run reported. */
export interface PoplarRuntimeErrorOptions extends PoptfjsErrorOptions {
  /** The errors the run reported (Poplar's `runtime_error::errors`). */
  errors?: readonly RuntimeErrorEntry[];
}

/** Poplar's `runtime_error`: an error while a program runs on the device. */
export class PoplarRuntimeError extends PoplarException {
  /** The errors the run reported, as Poplar's `runtime_error::errors` (empty when it reported none by location). */
  readonly errors: readonly RuntimeErrorEntry[];

  constructor(message: string, options: PoplarRuntimeErrorOptions = {}) {
    const { errors, ...rest } = options;
    super(message, { type: 'poplar_runtime_error', ...rest });
    this.errors = errors ?? [];
  }
}

/** Poplar's `application_runtime_error`: a run failed because of the program (a bug in the user code or the framework). */
export class PoplarApplicationRuntimeError extends PoplarRuntimeError {
  constructor(message: string, options: PoplarRuntimeErrorOptions = {}) {
    super(message, { type: 'poplar_application_runtime_error', ...options });
  }
}

/** Poplar's `system_runtime_error`: a run failed because of the system (the IPUs, their links, the host). */
export class PoplarSystemRuntimeError extends PoplarRuntimeError {
  constructor(message: string, options: PoplarRuntimeErrorOptions = {}) {
    super(message, { type: 'poplar_system_runtime_error', ...options });
  }
}

/** The action that recovers from a {@link RecoverableError}, as in Poplar. */
export type RecoveryAction = 'IPU_RESET' | 'LINK_RESET' | 'PARTITION_RESET' | 'FULL_RESET';

/**
 * The recovery actions by name. `POWER_CYCLE` is PopART's name for
 * PopTorch's `FULL_RESET`: `error.recoveryAction === RecoveryAction.POWER_CYCLE`
 * holds for a fault that needs the system power-cycled.
 */
export const RecoveryAction = {
  /** Reset the IPU. */
  IPU_RESET: 'IPU_RESET',
  /** Reset the IPU-Links (systems that are not Pods). */
  LINK_RESET: 'LINK_RESET',
  /** Reset the IPU partition (Pod systems). */
  PARTITION_RESET: 'PARTITION_RESET',
  /** Power-cycle the system (PopTorch's name). */
  FULL_RESET: 'FULL_RESET',
  /** Power-cycle the system (PopART's name). */
  POWER_CYCLE: 'FULL_RESET',
} as const satisfies Record<string, RecoveryAction>;

/** A transient device fault: perform `recoveryAction`, then carry on (PopART's `poplar_recoverable_runtime_error`). */
export class RecoverableError extends PoplarSystemRuntimeError {
  /** What must be done before the device can be used again. */
  readonly recoveryAction: RecoveryAction;

  constructor(message: string, recoveryAction: RecoveryAction, options: { location?: ErrorLocation; cause?: unknown; errors?: readonly RuntimeErrorEntry[] } = {}) {
    super(message, { type: 'poplar_recoverable_runtime_error', ...options });
    this.recoveryAction = recoveryAction;
  }
}

/** A persistent device fault: the device must be taken out of operation (PopART's `poplar_unrecoverable_runtime_error`). */
export class UnrecoverableError extends PoplarSystemRuntimeError {
  constructor(message: string, options: { location?: ErrorLocation; errors?: readonly RuntimeErrorEntry[] } = {}) {
    super(message, { type: 'poplar_unrecoverable_runtime_error', ...options });
  }
}

/**
 * Poplar's `unknown_runtime_error`: a system fault that may or may not be
 * recoverable; try the recovery actions in turn (IPU_RESET, LINK_RESET,
 * PARTITION_RESET, POWER_CYCLE) before taking the device out of service.
 */
export class PoplarUnknownRuntimeError extends PoplarSystemRuntimeError {
  constructor(message: string, options: PoptfjsErrorOptions = {}) {
    super(message, { type: 'poplar_unknown_runtime_error', ...options });
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
