/**
 * poptfjs's environment variables, and the names PopTorch, PopART and Poplar
 * give the same settings: `POPTORCH_CACHE_DIR`, `POPTORCH_WAIT_FOR_IPU`,
 * `POPTORCH_IPU_MODEL`, `POPTORCH_EXPORT_PROTO_FILE`, `POPLAR_ENGINE_OPTIONS` and `POPLAR_RUNTIME_OPTIONS` are read when poptfjs's
 * own name is unset, so a PopTorch user's environment works as it is. (The
 * log levels, `POPTORCH_LOG_LEVEL` and `POPART_LOG_LEVEL`, each set one side
 * of the loggers: see common/log.ts.)
 */

/** The other names of each of poptfjs's variables, in the order they are read. */
export const ENVIRONMENT_ALIASES: Readonly<Record<string, readonly string[]>> = {
  POPTFJS_CACHE_DIR: ['POPTORCH_CACHE_DIR'],
  POPTFJS_WAIT_FOR_IPU: ['POPTORCH_WAIT_FOR_IPU'],
  POPTFJS_IPU_MODEL: ['POPTORCH_IPU_MODEL'],
  POPTFJS_ENGINE_OPTIONS: ['POPLAR_ENGINE_OPTIONS'],
  POPTFJS_RUNTIME_OPTIONS: ['POPLAR_RUNTIME_OPTIONS'],
  POPTFJS_EXPORT_PROTO_FILE: ['POPTORCH_EXPORT_PROTO_FILE'],
};

/** The value of `name`, or of the first of its other names that is set, with the variable it came from; undefined if none is set. */
export function environmentSetting(name: string, env: NodeJS.ProcessEnv = process.env): { variable: string; value: string } | undefined {
  for (const variable of [name, ...(ENVIRONMENT_ALIASES[name] ?? [])]) {
    const value = env[variable];
    if (value !== undefined && value !== '') return { variable, value };
  }
  return undefined;
}
