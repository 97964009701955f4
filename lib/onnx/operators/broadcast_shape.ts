/**
 * The numpy broadcast of shapes, computed on the host.
 */
import { OnnxError } from '../proto/onnx_errors.js';

/** The shape `a` and `b` broadcast to (numpy rules); an error naming `where` if they do not broadcast. */
export function broadcastShape(a: readonly number[], b: readonly number[], where: string): number[] {
  const rank = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < rank; i++) {
    const da = a[a.length - rank + i] ?? 1;
    const db = b[b.length - rank + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw new OnnxError(`${where}: shapes [${a.join(', ')}] and [${b.join(', ')}] do not broadcast`, { location: where });
    }
    out.push(da === 1 ? db : da);
  }
  return out;
}
