/**
 * The argument rules of `Options`' own setters (those of its groups are in their files), and how an output mode's
 * return period is checked.
 */
import { z } from 'zod';
import { getLogger } from '../common/log.js';
import { type ArgumentRule, checkArgument, describeValue, enumRule, nonEmptyString, oneOfValues, positiveInteger } from '../option_vocabulary/argument_rules.js';
import { CommGroupType, ConnectionType, OutputMode, SyncPattern, TfjsBackendName } from '../option_vocabulary/enums.js';
import { type ExecutionStrategy, isExecutionStrategy } from '../strategy/execution_strategy.js';
import { RecomputationType } from '../strategy/recomputation.js';

const logger = getLogger('options');

/** A value of `OutputMode`. */
export const outputModeRule = enumRule(OutputMode, 'OutputMode');
/** A value of `CommGroupType`. */
export const commGroupTypeRule = enumRule(CommGroupType, 'CommGroupType');
/** A value of `ConnectionType`. */
export const connectionTypeRule = enumRule(ConnectionType, 'ConnectionType');
/** A value of `SyncPattern`. */
export const syncPatternRule = enumRule(SyncPattern, 'SyncPattern');
/** The name of a tfjs backend poptfjs can compute on. */
export const backendRule = oneOfValues(Object.values(TfjsBackendName), 'string');
/** An IPU version of `useOfflineIpuTarget`: 1, 2 or 21. */
export const ipuVersionRule = oneOfValues([1, 2, 21], 'number');
/** A value of `RecomputationType`. */
export const recomputationRule = enumRule(RecomputationType, 'RecomputationType');
/** One of the execution strategies. */
export const strategyRule: ArgumentRule<ExecutionStrategy> = {
  schema: z.custom<ExecutionStrategy>(isExecutionStrategy),
  jsType: 'object',
  expected: 'an execution strategy (PipelinedExecution, ShardedExecution, SerialPhasedExecution or ParallelPhasedExecution)',
};
/** The directory of the executable cache, or null to disable caching. */
export const cachePathRule: ArgumentRule<string | null> = {
  ...nonEmptyString,
  schema: nonEmptyString.schema.nullable(),
  expected: 'a non-empty string (a directory), or null to disable caching',
};

/**
 * The return period given with an output mode: required (a positive integer)
 * with `EveryN`; with any other mode it is ignored, as PopTorch ignores it,
 * with an info message, and the period is 1. `null` and `undefined` mean none.
 */
export function checkReturnPeriod(mode: OutputMode, period: number | null | undefined, where: string): number {
  if (mode === OutputMode.EveryN) {
    if (period === undefined || period === null) {
      throw new RangeError(`${where}: OutputMode.EveryN needs a return period (a positive integer), got none`);
    }
    return checkArgument(positiveInteger, period, `${where}: outputReturnPeriod`);
  }
  if (period !== undefined && period !== null) {
    logger.info(`${where}: return period ${describeValue(period)} ignored with OutputMode.${mode}; it only applies to OutputMode.EveryN`);
  }
  return 1;
}
