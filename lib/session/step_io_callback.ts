/**
 * `StepIOCallback`: the host side of a `session.run` as callbacks, as
 * PopART's `PyStepIOCallback(inputCb, inputCompleteCb, outputCb,
 * outputCompleteCb)`. Each input is read one micro-batch at a time, as the
 * device streams it: `inputCb(id, prefetch)` returns a buffer of one
 * micro-batch of input `id` and `inputCompleteCb(id)` says the device has
 * taken it. Each anchor's values are written one returned value at a time,
 * in the order of its buffer (see `session.anchorArrayShape`):
 * `outputCb(id)` returns the buffer of one value (the anchor's shape) to
 * write into and `outputCompleteCb(id)` says it is written.
 */
import { z } from 'zod';
import { checkedArgument } from './checked_argument.js';
import type { HostArray } from './step_io.js';

/** Returns a buffer of one micro-batch of input `id` (`prefetch`: read ahead of its use; poptfjs reads as it streams, so always false). */
export type InputCallback = (id: string, prefetch: boolean) => HostArray;
/** Told that the micro-batch of input `id` the last `inputCb` gave has been taken. */
export type InputCompleteCallback = (id: string) => void;
/** Returns the buffer one value of anchor `id` is written into. */
export type OutputCallback = (id: string) => HostArray;
/** Told that the value of anchor `id` has been written into the last buffer `outputCb` gave. */
export type OutputCompleteCallback = (id: string) => void;

const callback = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', { message: 'expected a function' });

/** The callbacks of a run. */
export class StepIOCallback {
  readonly inputCb: InputCallback;
  readonly inputCompleteCb: InputCompleteCallback;
  readonly outputCb: OutputCallback;
  readonly outputCompleteCb: OutputCompleteCallback;

  constructor(inputCb: InputCallback, inputCompleteCb: InputCompleteCallback, outputCb: OutputCallback, outputCompleteCb: OutputCompleteCallback) {
    const checked = checkedArgument(z.tuple([callback, callback, callback, callback]), [inputCb, inputCompleteCb, outputCb, outputCompleteCb], 'StepIOCallback');
    [this.inputCb, this.inputCompleteCb, this.outputCb, this.outputCompleteCb] = checked as unknown as [
      InputCallback,
      InputCompleteCallback,
      OutputCallback,
      OutputCompleteCallback,
    ];
  }
}
