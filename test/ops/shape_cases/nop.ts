/** The calls of `ops.nop` on which the shape-rules test checks its kernel's shape rule. */
import * as ops from '../../../ops/index.js';
import type { OpCase } from '../../backend/shape_only/op_catalog.js';

/** Its cases, each running the op on inputs made by the {@link OpCase} tensor maker. */
export const shapeCases: readonly OpCase[] = [{ name: 'ops.nop', run: (t) => ops.nop(t.random([2, 3], 'int32')) }];
