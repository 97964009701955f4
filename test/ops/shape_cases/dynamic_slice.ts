/** The calls of `ops.dynamicSlice` on which the shape-rules test checks its kernel's shape rule. */
import * as ops from '../../../ops/index.js';
import type { OpCase } from '../../backend/shape_only/op_catalog.js';

/** Its cases, each running the op on inputs made by the {@link OpCase} tensor maker. */
export const shapeCases: readonly OpCase[] = [{ name: 'ops.dynamicSlice', run: (t) => ops.dynamicSlice(t.random([2, 8]), 1, t.values(2, [], 'int32'), 4, 3) }];
