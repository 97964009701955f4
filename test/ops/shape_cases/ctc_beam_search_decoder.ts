/** The calls of `ops.ctcBeamSearchDecoder` on which the shape-rules test checks its kernel's shape rule. */
import * as ops from '../../../ops/index.js';
import type { OpCase } from '../../backend/shape_only/op_catalog.js';

/** Its cases, each running the op on inputs made by the {@link OpCase} tensor maker. */
export const shapeCases: readonly OpCase[] = [
  { name: 'ops.ctcBeamSearchDecoder', run: (t) => ops.ctcBeamSearchDecoder(t.random([5, 2, 4]), t.values([5, 3], [2], 'int32'), 0, 3, 2) },
];
