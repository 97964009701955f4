/** The calls of `ops.serializedMatMul` on which the shape-rules test checks its kernel's shape rule. */
import * as ops from '../../../ops/index.js';
import type { OpCase } from '../../backend/shape_only/op_catalog.js';

/** Its cases, each running the op on inputs made by the {@link OpCase} tensor maker. */
export const shapeCases: readonly OpCase[] = [
  { name: 'ops.serializedMatMul', run: (t) => ops.serializedMatMul(t.random([2, 4, 6]), t.random([6, 8]), ops.MatMulSerializationMode.OutputChannels, 2) },
];
