/**
 * The optimizer state a training executable holds right after it is
 * compiled (or after a fault lost it), as PopTorch's is readable before the
 * first step: step 0 and every state slot at its start value, for the
 * parameters not split across replica groups (key `''`) and for each replica
 * group of a split one (key `name#group`, with one replica's slice shape).
 */
import { paramValues } from '../ir/graph.js';
import type { Executable } from '../executable/executable.js';
import { replicaGroups } from '../executable/replica_grouping.js';
import type { Optimizer } from '../../optim/optimizer.js';
import type { OptimizerStateData, OptimizerStateRecord } from '../../optim/optimizer_state.js';

/**
 * The state `optimizer` starts with on `executable`'s device, with the loss
 * scale `lossScale`; a key whose parameters it does not train is left out.
 */
export function initialOptimizerState(optimizer: Optimizer, executable: Executable, lossScale: number): OptimizerStateData {
  const { replicaGroupings, factors } = executable;
  const unsplit = new Map<string, readonly number[]>();
  const states: Record<string, OptimizerStateRecord> = {};
  for (const [name, value] of paramValues(executable.graph)) {
    const grouping = replicaGroupings[name];
    if (!grouping) {
      unsplit.set(name, value.shape);
      continue;
    }
    const record = optimizer.initialState(new Map([[name, value.shape]]));
    if (Object.keys(record.slots).length === 0) continue;
    const groups = replicaGroups(grouping.type, grouping.groupSize, factors.replicationFactor).length;
    for (let k = 0; k < groups; k++) states[`${name}#${k}`] = record;
  }
  const shared = optimizer.initialState(unsplit);
  if (Object.keys(shared.slots).length > 0) states[''] = shared;
  return { lossScale, states };
}
