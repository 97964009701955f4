/**
 * Recurrent layers: RNN, GRU and LSTM, forward, reverse or bidirectional,
 * with biases, initial states, LSTM peepholes, `clip`, custom activations,
 * both layouts (opset 14) and per-batch sequence lengths (known at import).
 *
 * The time loop is unrolled: the sequence length is static, so the traced
 * graph holds one step of kernels per time step. Inputs are projected for all
 * steps at once; each step adds the recurrent projection and applies the
 * gates.
 */
import * as tf from '@tensorflow/tfjs';
import { hostNumbers } from '../proto/host_tensor.js';
import { OnnxError } from '../proto/onnx_errors.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

type Activation = (x: tf.Tensor) => tf.Tensor;

/** An ONNX activation by name, taking its alpha/beta from the lists as it needs them. */
function activation(call: OperatorCall, name: string, alphas: number[], betas: number[]): Activation {
  const alpha = (fallback: number) => alphas.shift() ?? fallback;
  const beta = (fallback: number) => betas.shift() ?? fallback;
  switch (name.toLowerCase()) {
    case 'sigmoid':
      return tf.sigmoid;
    case 'tanh':
      return tf.tanh;
    case 'relu':
      return tf.relu;
    case 'softsign':
      return (x) => tf.div(x, tf.add(tf.abs(x), 1));
    case 'softplus':
      return tf.softplus;
    case 'affine': {
      const a = alpha(1);
      const b = beta(0);
      return (x) => tf.add(tf.mul(x, a), b);
    }
    case 'leakyrelu': {
      const a = alpha(0.01);
      return (x) => tf.leakyRelu(x, a);
    }
    case 'thresholdedrelu': {
      const a = alpha(1);
      return (x) => tf.where(tf.greater(x, a), x, tf.zerosLike(x));
    }
    case 'scaledtanh': {
      const a = alpha(1);
      const b = beta(1);
      return (x) => tf.mul(tf.tanh(tf.mul(x, b)), a);
    }
    case 'hardsigmoid': {
      const a = alpha(0.2);
      const b = beta(0.5);
      return (x) => tf.clipByValue(tf.add(tf.mul(x, a), b), 0, 1);
    }
    case 'elu': {
      const a = alpha(1);
      return (x) => tf.where(tf.greater(x, 0), x, tf.mul(tf.sub(tf.exp(x), 1), a));
    }
    default:
      throw new OnnxError(`${call.where}: unknown activation '${name}'`, { location: call.where });
  }
}

/** The state a cell carries from step to step: H, and C for LSTM. */
interface CellState {
  h: tf.Tensor;
  c?: tf.Tensor;
}

/** One time step: input projection `xw` [batch, gates * hidden] and the previous state → the next state. */
type Cell = (xw: tf.Tensor, state: CellState) => CellState;

/** What a cell of one direction needs: its recurrent weights and biases, already split. */
interface DirectionWeights {
  r: tf.Tensor;
  rb: tf.Tensor | undefined;
  p: tf.Tensor | undefined;
}

interface RecurrentKind {
  readonly gates: number;
  readonly defaults: readonly string[];
  readonly cell: (call: OperatorCall, weights: DirectionWeights, fns: Activation[], hidden: number) => Cell;
}

function clipped(call: OperatorCall): (x: tf.Tensor) => tf.Tensor {
  if (!call.attrs.has('clip')) return (x) => x;
  const clip = call.attrs.float('clip');
  return (x) => tf.clipByValue(x, -clip, clip);
}

const RNN: RecurrentKind = {
  gates: 1,
  defaults: ['Tanh'],
  cell: (call, { r, rb }, [f]) => {
    const clip = clipped(call);
    return (xw, { h }) => {
      const pre = tf.add(xw, tf.matMul(h, r, false, true));
      return { h: f!(clip(rb ? tf.add(pre, rb) : pre)) };
    };
  },
};

const GRU: RecurrentKind = {
  gates: 3,
  defaults: ['Sigmoid', 'Tanh'],
  cell: (call, { r, rb }, [f, g], hidden) => {
    const clip = clipped(call);
    const linearBeforeReset = call.attrs.int('linear_before_reset', 0) !== 0;
    const [rz, rr, rh] = tf.split(r, 3, 0) as [tf.Tensor, tf.Tensor, tf.Tensor];
    const [bz, br, bh] = rb ? (tf.split(rb, 3, 0) as [tf.Tensor, tf.Tensor, tf.Tensor]) : [undefined, undefined, undefined];
    const plus = (x: tf.Tensor, b: tf.Tensor | undefined) => (b ? tf.add(x, b) : x);
    return (xw, { h }) => {
      const [xz, xr, xh] = tf.split(xw, [hidden, hidden, hidden], 1) as [tf.Tensor, tf.Tensor, tf.Tensor];
      const z = f!(clip(plus(tf.add(xz, tf.matMul(h, rz, false, true)), bz)));
      const reset = f!(clip(plus(tf.add(xr, tf.matMul(h, rr, false, true)), br)));
      const recurrent = linearBeforeReset ? tf.mul(reset, plus(tf.matMul(h, rh, false, true), bh)) : plus(tf.matMul(tf.mul(reset, h), rh, false, true), bh);
      const candidate = g!(clip(tf.add(xh, recurrent)));
      return { h: tf.add(tf.mul(tf.sub(1, z), candidate), tf.mul(z, h)) };
    };
  },
};

const LSTM: RecurrentKind = {
  gates: 4,
  defaults: ['Sigmoid', 'Tanh', 'Tanh'],
  cell: (call, { r, rb, p }, [f, g, hAct], hidden) => {
    const clip = clipped(call);
    const inputForget = call.attrs.int('input_forget', 0) !== 0;
    const [pi, po, pf] = p ? (tf.split(p, 3, 0) as [tf.Tensor, tf.Tensor, tf.Tensor]) : [undefined, undefined, undefined];
    const peep = (x: tf.Tensor, weights: tf.Tensor | undefined, c: tf.Tensor) => (weights ? tf.add(x, tf.mul(weights, c)) : x);
    return (xw, { h, c }) => {
      const pre = tf.add(xw, tf.matMul(h, r, false, true));
      const [xi, xo, xf, xc] = tf.split(rb ? tf.add(pre, rb) : pre, [hidden, hidden, hidden, hidden], 1) as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
      const i = f!(clip(peep(xi, pi, c!)));
      const forget = inputForget ? tf.sub(1, i) : f!(clip(peep(xf, pf, c!)));
      const cNext = tf.add(tf.mul(forget, c!), tf.mul(i, g!(clip(xc))));
      const o = f!(clip(peep(xo, po, cNext)));
      return { h: tf.mul(o, hAct!(cNext)), c: cNext };
    };
  },
};

/** Reverses each batch element's first `lengths[b]` steps of a [seq, batch, ...] tensor. */
function reverseSteps(x: tf.Tensor, lengths: readonly number[]): tf.Tensor {
  const [steps, batch] = x.shape as [number, number];
  const rows = Array.from({ length: steps * batch }, (_, i) => {
    const t = Math.floor(i / batch);
    const b = i % batch;
    return (t < lengths[b]! ? lengths[b]! - 1 - t : t) * batch + b;
  });
  const flat = tf.reshape(x, [steps * batch, ...x.shape.slice(2)]);
  return tf.reshape(tf.gather(flat, tf.tensor1d(rows, 'int32')), x.shape);
}

function recurrent(kind: RecurrentKind): OperatorImplementation {
  // biome-ignore lint/complexity/noExcessiveCognitiveComplexity: the RNN, GRU and LSTM operators' attributes and optional inputs, each checked and defaulted as the ONNX schema says, then the recurrence
  return (call) => {
    const hidden = call.attrs.int('hidden_size');
    const batchFirst = call.attrs.int('layout', 0) === 1;
    const direction = call.attrs.string('direction', 'forward');
    const directions = direction === 'bidirectional' ? 2 : 1;
    let x = call.input(0);
    if (batchFirst) x = tf.transpose(x, [1, 0, 2]);
    const [steps, batch] = x.shape as [number, number];
    const lengthsInput = call.optionalConstantInput(4);
    const lengths = lengthsInput ? hostNumbers(lengthsInput) : new Array<number>(batch).fill(steps);
    const masked = lengths.some((l) => l !== steps);
    const names = call.attrs.strings('activations') ?? [];
    const alphas = call.attrs.floats('activation_alpha', []);
    const betas = call.attrs.floats('activation_beta', []);
    const split = (t: tf.Tensor | undefined) => (t ? tf.split(t, directions, 0).map((d) => tf.squeeze(d, [0])) : []);
    const [w, r, b, h0, c0, p] = [call.input(1), call.input(2), call.optionalInput(3), call.optionalInput(5), call.optionalInput(6), call.optionalInput(7)].map(split);
    const outputs: tf.Tensor[] = [];
    const finals: CellState[] = [];
    for (let d = 0; d < directions; d++) {
      const reverse = direction === 'reverse' || d === 1;
      const fns = kind.defaults.map((fallback, i) => activation(call, names[d * kind.defaults.length + i] ?? fallback, alphas, betas));
      const [wb, rb] = b![d] ? (tf.split(b![d]!, 2, 0) as [tf.Tensor, tf.Tensor]) : [undefined, undefined];
      const cell = kind.cell(call, { r: r![d]!, rb, p: p![d] }, fns, hidden);
      const input = reverse ? reverseSteps(x, lengths) : x;
      let projected = tf.reshape(tf.matMul(tf.reshape(input, [steps * batch, x.shape[2]!]), w![d]!, false, true), [steps, batch, kind.gates * hidden]);
      if (wb) projected = tf.add(projected, wb);
      const zeros = tf.zeros([batch, hidden]);
      let state: CellState = { h: h0![d] ?? zeros, ...(kind === LSTM ? { c: c0![d] ?? zeros } : {}) };
      const ys: tf.Tensor[] = [];
      tf.unstack(projected).forEach((xw, t) => {
        const next = cell(xw, state);
        if (masked) {
          const live = tf.tensor2d(
            lengths.map((l) => [t < l ? 1 : 0]),
            [batch, 1],
            'bool',
          );
          state = { h: tf.where(live, next.h, state.h), ...(next.c ? { c: tf.where(live, next.c, state.c!) } : {}) };
          ys.push(tf.where(live, next.h, zeros));
        } else {
          state = next;
          ys.push(next.h);
        }
      });
      const y = tf.stack(ys);
      outputs.push(reverse ? reverseSteps(y, lengths) : y);
      finals.push(state);
    }
    let y = tf.stack(outputs, 1);
    if (batchFirst) y = tf.transpose(y, [2, 0, 1, 3]);
    const stacked = (states: tf.Tensor[]) => {
      const s = tf.stack(states);
      return batchFirst ? tf.transpose(s, [1, 0, 2]) : s;
    };
    return [y, stacked(finals.map((s) => s.h)), kind === LSTM ? stacked(finals.map((s) => s.c!)) : undefined];
  };
}

/** Recurrent operators. */
export const RECURRENT_OPERATORS: OperatorFamily = {
  RNN: [{ since: 7, run: recurrent(RNN) }],
  GRU: [{ since: 7, run: recurrent(GRU) }],
  LSTM: [{ since: 7, run: recurrent(LSTM) }],
};
