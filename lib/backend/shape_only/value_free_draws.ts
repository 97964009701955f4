/**
 * Random draws without values while planning.
 *
 * tfjs's random ops (`tf.randomNormal`, `tf.randomUniform`,
 * `tf.truncatedNormal`, `tf.randomGamma`, and the ops built on them:
 * `tf.randomStandardNormal`, `tf.randomUniformInt`, `tf.dropout`, the layers'
 * random initializers) make no kernel call: each allocates a `TensorBuffer`
 * of the draw's size, fills it element by element in JavaScript, and hands
 * it to `Engine.makeTensor`. Their functions are bound inside tfjs's bundles
 * (an ES module namespace cannot be patched), so the draw is caught where
 * tfjs lets it be: each op runs in an engine scope of its name, and while
 * such a scope is open on the shape-only backend the first `TensorBuffer`
 * it builds is given size 0, so nothing is allocated or drawn, and the
 * tensor it then makes is described by shape and dtype alone.
 */
import * as tf from '@tensorflow/tfjs';
import { engine, hookEngine } from '../tfjs_internals.js';
import type { ShapeOnlyBackend } from './shape_only_backend.js';

/** The engine scopes of tfjs's random ops (`<op>__op`), with the op each draw is named by in errors. */
export const RANDOM_DRAW_SCOPES: ReadonlyMap<string, string> = new Map([
  ['randomNormal__op', 'tf.randomNormal'],
  ['randomUniform__op', 'tf.randomUniform'],
  ['truncatedNormal__op', 'tf.truncatedNormal'],
  ['randomGamma__op', 'tf.randomGamma'],
]);

/** A random op's scope, open, whose buffer is not built yet. */
interface OpenDraw {
  readonly scopeId: number;
  readonly op: string;
}

/** The buffer of a random op, built with size 0, whose tensor is not made yet. */
interface EmptiedBuffer extends OpenDraw {
  readonly buffer: tf.TensorBuffer<tf.Rank>;
}

/**
 * Makes tfjs's random ops draw nothing while `shapeOnly()` answers the
 * backend in use (the shape-only one) or undefined: their tensors are made
 * by the backend's `makeValueFree`. Returns the function that undoes it.
 */
export function drawWithoutValues(shapeOnly: () => ShapeOnlyBackend | undefined): () => void {
  const eng = engine();
  let open: OpenDraw | undefined;
  let emptied: EmptiedBuffer | undefined;

  const unhookStart = hookEngine(
    'startScope',
    (startScope) =>
      function (name) {
        startScope.call(eng, name);
        const op = name === undefined ? undefined : RANDOM_DRAW_SCOPES.get(name);
        if (op !== undefined && shapeOnly() !== undefined) open = { scopeId: eng.state.activeScope!.id, op };
      },
  );
  const unhookEnd = hookEngine(
    'endScope',
    (endScope) =>
      function (result) {
        const closing = eng.state.activeScope?.id;
        if (open?.scopeId === closing) open = undefined;
        if (emptied?.scopeId === closing) emptied = undefined;
        endScope.call(eng, result);
      },
  );
  const unhookMake = hookEngine(
    'makeTensor',
    (makeTensor) =>
      function (values, shape, dtype, backend) {
        const draw = emptied !== undefined && values === emptied.buffer.values ? emptied : undefined;
        const backendOfDraw = draw === undefined ? undefined : shapeOnly();
        if (draw === undefined || backendOfDraw === undefined) return makeTensor.call(eng, values, shape, dtype, backend);
        const { op } = draw;
        emptied = undefined;
        return eng.makeTensorFromTensorInfo(backendOfDraw.makeValueFree({ shape, dtype }, { kind: 'drawn', op }), backendOfDraw);
      },
  );

  // `TensorBuffer`'s constructor sets `this.size` before it allocates `size` values: an accessor on the prototype
  // sees that assignment and, for the first buffer of an open random op, makes it 0. The buffer keeps its shape.
  const prototype = tf.TensorBuffer.prototype;
  Object.defineProperty(prototype, 'size', {
    configurable: true,
    get: () => undefined,
    set(this: tf.TensorBuffer<tf.Rank>, size: number) {
      let own = size;
      if (open !== undefined) {
        own = 0;
        emptied = { ...open, buffer: this };
        open = undefined;
      }
      Object.defineProperty(this, 'size', { value: own, writable: true, enumerable: true, configurable: true });
    },
  });

  return () => {
    delete (prototype as { size?: number }).size;
    unhookMake();
    unhookEnd();
    unhookStart();
  };
}
