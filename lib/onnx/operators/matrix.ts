/**
 * Matrix products: MatMul (numpy semantics: 1-D operands are promoted and
 * batch dimensions broadcast), Gemm (`alpha * A' B' + beta * C`) and Einsum.
 */
import * as tf from '@tensorflow/tfjs';
import { broadcastShape } from './broadcast_shape.js';
import type { OperatorFamily, OperatorImplementation } from './operator.js';

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** `a @ b` as numpy computes it. */
export function numpyMatMul(a: tf.Tensor, b: tf.Tensor, where: string): tf.Tensor {
  const vectorA = a.rank === 1;
  const vectorB = b.rank === 1;
  let x = vectorA ? tf.reshape(a, [1, a.shape[0]!]) : a;
  let y = vectorB ? tf.reshape(b, [b.shape[0]!, 1]) : b;
  const batchX = x.shape.slice(0, -2);
  const batchY = y.shape.slice(0, -2);
  const batch = broadcastShape(batchX, batchY, where);
  const size = (s: readonly number[]) => s.reduce((p, d) => p * d, 1);
  // tfjs broadcasts batch dimensions only when one side has a single batch.
  if (size(batchX) !== 1 && size(batchY) !== 1 && !sameShape(batchX, batchY)) {
    if (!sameShape(batchX, batch)) x = tf.broadcastTo(x, [...batch, ...x.shape.slice(-2)]);
    if (!sameShape(batchY, batch)) y = tf.broadcastTo(y, [...batch, ...y.shape.slice(-2)]);
  }
  let out: tf.Tensor;
  if (y.rank === 2 && x.rank > 2) {
    // A batch of rows times one matrix is one matrix product of all the rows (tfjs's wasm kernel is fast for a single batch only).
    const [m, k] = x.shape.slice(-2) as [number, number];
    out = tf.reshape(tf.matMul(tf.reshape(x, [size(batchX) * m, k]), y), [...batchX, m, y.shape[1]!]);
  } else {
    out = tf.matMul(x, y);
  }
  if (vectorA && vectorB) out = tf.reshape(out, out.shape.slice(0, -2));
  else if (vectorA) out = tf.reshape(out, [...out.shape.slice(0, -2), out.shape[out.rank - 1]!]);
  else if (vectorB) out = tf.reshape(out, out.shape.slice(0, -1));
  return out;
}

const gemm: OperatorImplementation = (call) => {
  const alpha = call.attrs.float('alpha', 1);
  const beta = call.attrs.float('beta', 1);
  let y = tf.matMul(call.input(0), call.input(1), call.attrs.int('transA', 0) === 1, call.attrs.int('transB', 0) === 1);
  if (alpha !== 1) y = tf.mul(y, alpha);
  const c = call.optionalInput(2);
  if (c && beta !== 0) y = tf.add(y, beta === 1 ? c : tf.mul(c, beta));
  return [y];
};

/** The labels of an Einsum term for an operand of rank `rank`; the dimensions under `...` are labelled `...0`, `...1`, ... from the right. */
function einsumLabels(term: string, rank: number, ellipsisRank: number): string[] {
  const at = term.indexOf('...');
  if (at < 0) return [...term];
  const before = [...term.slice(0, at)];
  const after = [...term.slice(at + 3)];
  const count = rank - before.length - after.length;
  return [...before, ...Array.from({ length: count }, (_, k) => `...${ellipsisRank - count + k}`), ...after];
}

/** Takes the diagonal of the two axes labelled alike, until every label of the operand is unique. */
function einsumDiagonals(x: tf.Tensor, labels: string[]): [tf.Tensor, string[]] {
  for (let q = 1; q < labels.length; q++) {
    const p = labels.indexOf(labels[q]!);
    if (p === q) continue;
    const n = x.shape[p]!;
    const eye = tf.tensor(
      Float32Array.from({ length: n * n }, (_, i) => (Math.floor(i / n) === i % n ? 1 : 0)),
      x.shape.map((_, i) => (i === p || i === q ? n : 1)),
    );
    return einsumDiagonals(
      tf.sum(tf.mul(x, eye), q),
      labels.filter((_, i) => i !== q),
    );
  }
  return [x, labels];
}

/** Einsum by broadcasting: operands aligned on all labels, multiplied, and summed over the labels not in the output. */
const einsum: OperatorImplementation = (call) => {
  const [lhs, rhs] = call.attrs.string('equation').replace(/\s/g, '').split('->') as [string, string | undefined];
  const terms = lhs.split(',');
  const inputs = terms.map((_, i) => call.input(i));
  const ellipsisRank = Math.max(0, ...terms.map((t, i) => (t.includes('...') ? inputs[i]!.rank - (t.length - 3) : 0)));
  const operands = terms.map((t, i) => einsumDiagonals(inputs[i]!, einsumLabels(t, inputs[i]!.rank, ellipsisRank)));
  const all = [...new Set(operands.flatMap(([, labels]) => labels))];
  const ellipsis = Array.from({ length: ellipsisRank }, (_, k) => `...${k}`);
  const counts = new Map<string, number>();
  for (const t of terms) for (const c of t.replace('...', '')) counts.set(c, (counts.get(c) ?? 0) + 1);
  const output =
    rhs === undefined
      ? [
          ...ellipsis,
          ...[...counts]
            .filter(([, n]) => n === 1)
            .map(([c]) => c)
            .sort(),
        ]
      : einsumLabels(rhs, ellipsisRank + rhs.replace('...', '').length, ellipsisRank);
  const aligned = operands.map(([x, labels]) => {
    const order = all.filter((l) => labels.includes(l));
    const moved = tf.transpose(
      x,
      order.map((l) => labels.indexOf(l)),
    );
    return tf.reshape(
      moved,
      all.map((l) => (order.includes(l) ? moved.shape[order.indexOf(l)]! : 1)),
    );
  });
  let product = aligned.reduce((a, b) => tf.mul(a, b));
  const summed = all.flatMap((l, i) => (output.includes(l) ? [] : [i]));
  if (summed.length > 0) product = tf.sum(product, summed);
  const remaining = all.filter((l) => output.includes(l));
  return [
    tf.transpose(
      product,
      output.map((l) => remaining.indexOf(l)),
    ),
  ];
};

/** Matrix products. */
export const MATRIX_OPERATORS: OperatorFamily = {
  MatMul: [{ since: 1, run: (call) => [numpyMatMul(call.input(0), call.input(1), call.where)] }],
  Gemm: [{ since: 1, run: gemm }],
  Einsum: [{ since: 12, run: einsum }],
};
