/**
 * `OutputMode.EveryN` and pipelining, as PopART has them: a model pipelined
 * over more than one IPU (`PipelinedExecution`, PopTorch's default, turns
 * PopART's `enablePipelining` on when the model uses several IPUs) cannot
 * return its outputs or anchored tensors every N iterations
 * (popx/irlowering.cpp: "AnchorReturnType::EVERYN is not valid for
 * pipelined models").
 */
import { PoptfjsError } from '../common/errors.js';
import type { Executable } from '../executable/executable.js';

/** Refuses an executable pipelined over several IPUs that returns outputs or anchors with `EveryN`, naming them. */
export function checkEveryNPipelining(executable: Executable): void {
  const { placement } = executable;
  if (placement.strategy !== 'PipelinedExecution' || placement.ipusPerReplica <= 1) return;
  const everyN = [
    ...(executable.outputMode === 'EveryN' ? ['the outputs (Options.outputMode)'] : []),
    ...(executable.anchors ?? []).filter((a) => a.outputMode === 'EveryN').map((a) => `anchored tensor '${a.name}'`),
  ];
  if (everyN.length === 0) return;
  throw new PoptfjsError(
    `OutputMode.EveryN is not valid for pipelined models (${everyN.join(', ')}): the model is pipelined over ${placement.ipusPerReplica} IPUs; ` +
      'use OutputMode.All, Final or Sum, or ShardedExecution',
    { type: 'options' },
  );
}
