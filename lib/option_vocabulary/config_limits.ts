/**
 * The limits on the shape of options config text (PopTorch-format files, JSON
 * files, `POPTFJS_DEFAULT_OPTIONS`), so that a hostile text is refused with an
 * error naming where it breaks them instead of exhausting the stack.
 */

/**
 * The deepest nesting a config text may have: brackets, and in PopTorch-format
 * files also calls and `.name` chains, each count one level
 * (`setExecutionStrategy(SerialPhasedExecution(Phase(Stage("A").ipu(0))))` is 7
 * levels deep, and `{"training": {"gradientAccumulation": 2}}` is 2).
 */
export const MAX_CONFIG_NESTING = 100;

/**
 * The most arguments one call of a PopTorch-format file may take, and the most
 * stages, blocks or phases an execution strategy's data may list.
 */
export const MAX_CALL_ARGUMENTS = 10_000;
