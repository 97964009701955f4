/**
 * The settings overlapped host I/O needs (`ops.setOverlapForInput` /
 * `setOverlapForOutput`), refused otherwise with PopTorch's messages
 * (popart_compiler/source/Compiler.cpp, `verifySettingsForOverlappedIO`,
 * checked as soon as one input or output overlaps).
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph } from '../ir/graph.js';
import type { OptionsSettings } from '../options/options_settings.js';
import type { ResolvedOutputMode } from '../executable/output_mode.js';

/** Checks that a graph with overlapped host I/O runs with I/O tiles, without pipelining, and returns `All` or `Sum` outputs. */
export function checkHostOverlapSettings(graph: Graph, settings: OptionsSettings, outputMode: ResolvedOutputMode): void {
  const marks = graph.roles.hostOverlap ?? [];
  if (marks.length === 0) return;
  const what = `${marks.length} model input(s)/output(s) marked with ops.setOverlapForInput / setOverlapForOutput`;
  const fail = (message: string) => new PoptfjsError(`${message} (${what})`, { type: 'options' });
  if (settings.executionStrategy.type === 'PipelinedExecution') {
    throw fail('Overlapped IO is not supported with poptorch.PipelinedExecution. If you are using only one IPU, please switch to poptorch.ShardedExecution.');
  }
  if ((settings.tensorLocations.numIOTiles ?? 0) === 0) {
    throw fail('No IO tiles allocated. You must allocate at least 32 IO tiles using poptorch.Options().TensorLocations.numIOTiles.');
  }
  if (outputMode !== 'All' && outputMode !== 'Sum') {
    throw fail(
      `Unsupported output mode for overlapped IO. Please switch output mode to poptorch.OutputMode.All or poptorch.OutputMode.Sum. (the output mode is ${outputMode})`,
    );
  }
}
