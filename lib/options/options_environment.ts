/**
 * The options a new `Options` takes from the environment: Open MPI's process
 * id and count, `POPTFJS_DEFAULT_OPTIONS`, the executable cache directory and
 * the IPU Model flag.
 */
import { environmentSetting } from '../common/environment.js';
import { getLogger } from '../common/log.js';
import { checkArgument, oneOfValues } from '../option_vocabulary/argument_rules.js';
import { applyJsonConfigText } from './config_file.js';
import type { OptionSetters } from './option_setters.js';

const logger = getLogger('options');

const environmentFlagRule = oneOfValues(['0', '1'], 'string');

/**
 * Applies the environment to `options`, as PopTorch does: the process id and
 * count Open MPI gives (`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`) in
 * `Distributed`, the JSON options in `POPTFJS_DEFAULT_OPTIONS`, the cache
 * directory in `POPTFJS_CACHE_DIR` (or `POPTORCH_CACHE_DIR`) and the IPU Model
 * in `POPTFJS_IPU_MODEL` (or `POPTORCH_IPU_MODEL`: `1` or `0`). Bad JSON or an
 * unknown key in `POPTFJS_DEFAULT_OPTIONS` is a `ConfigFileError` naming the variable.
 */
export function applyEnvironmentOptions(options: OptionSetters): void {
  options.Distributed.setEnvVarNames('OMPI_COMM_WORLD_SIZE', 'OMPI_COMM_WORLD_RANK');
  const defaults = process.env.POPTFJS_DEFAULT_OPTIONS;
  if (defaults !== undefined && defaults.trim() !== '') {
    applyJsonConfigText(options, defaults, 'POPTFJS_DEFAULT_OPTIONS');
  }
  const cacheDir = environmentSetting('POPTFJS_CACHE_DIR');
  if (cacheDir !== undefined) {
    logger.info(`${cacheDir.variable} is set: caching executables in ${cacheDir.value}`);
    options.enableExecutableCaching(cacheDir.value);
  }
  const ipuModel = environmentSetting('POPTFJS_IPU_MODEL');
  if (ipuModel !== undefined) options.useIpuModel(checkArgument(environmentFlagRule, ipuModel.value, ipuModel.variable) === '1');
}
