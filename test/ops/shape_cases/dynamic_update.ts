/** The calls of `ops.dynamicUpdate` on which the shape-rules test checks its kernel's shape rule. */
import * as ops from '../../../ops/index.js';
import type { OpCase } from '../../backend/shape_only/op_catalog.js';

/** Its cases, each running the op on inputs made by the {@link OpCase} tensor maker. */
export const shapeCases: readonly OpCase[] = [
  { name: 'ops.dynamicUpdate', run: (t) => ops.dynamicUpdate(t.random([2, 8]), t.random([2, 3]), 1, t.values([4], [1], 'int32'), 3) },
];
