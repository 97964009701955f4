/** The calls of `ops.nearest` on which the shape-rules test checks its kernel's shape rule. */
import * as ops from '../../../ops/index.js';
import type { OpCase } from '../../backend/shape_only/op_catalog.js';

/** Its cases, each running the op on inputs made by the {@link OpCase} tensor maker. */
export const shapeCases: readonly OpCase[] = [
  { name: 'ops.nearest', run: (t) => ops.nearest(t.random([4, 2]), t.random([3, 2]), t.values([0, 0, 1, 1], [4], 'int32'), t.values([0, 1, 1], [3], 'int32')) },
];
