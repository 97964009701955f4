/**
 * The simulated timeline of one call in the Trace Event Format that Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: one process for the model, one
 * thread per IPU (named `IPU n`, in IPU order), and one complete event
 * (`"ph": "X"`) per segment, its category the segment's kind (compute,
 * exchange, sync, streaming, host, all-reduce, update) and its name what ran
 * (`F1:3`: the forward pass of stage 1 on micro-batch 3). Times are in
 * microseconds of simulated time from the start of the call.
 */
import type { Executable } from '../executable/executable.js';

/** One event of the Trace Event Format. */
export interface TraceEvent {
  readonly name: string;
  /** `X`: a complete event (start and duration); `M`: metadata (process and thread names, order). */
  readonly ph: 'X' | 'M';
  readonly pid: number;
  readonly tid: number;
  readonly cat?: string;
  /** Start, microseconds. */
  readonly ts?: number;
  /** Duration, microseconds. */
  readonly dur?: number;
  readonly args?: Readonly<Record<string, string | number>>;
}

/** A trace file: the events and the unit the viewers show times in. */
export interface ChromeTrace {
  readonly traceEvents: readonly TraceEvent[];
  readonly displayTimeUnit: 'ms' | 'ns';
  /** What was traced: the model, its kind, strategy, target clock and cycles per call. */
  readonly otherData: Readonly<Record<string, string | number>>;
}

/** The process id the model's events carry. */
const MODEL_PID = 1;

/** The timeline of one call of `executable` as a Chrome trace. */
export function chromeTrace(executable: Executable): ChromeTrace {
  const { timeline, spec } = executable.hardware;
  const micro = (seconds: number) => Math.round(seconds * 1e9) / 1e3;
  const metadata: TraceEvent[] = [{ name: 'process_name', ph: 'M', pid: MODEL_PID, tid: 0, args: { name: `${executable.modelName} (${executable.kind}, simulated)` } }];
  for (const { ipu } of timeline.ipus) {
    metadata.push({ name: 'thread_name', ph: 'M', pid: MODEL_PID, tid: ipu, args: { name: `IPU ${ipu}` } });
    metadata.push({ name: 'thread_sort_index', ph: 'M', pid: MODEL_PID, tid: ipu, args: { sort_index: ipu } });
  }
  const events = timeline.segments.map(
    (s): TraceEvent => ({
      name: s.label || s.kind,
      cat: s.kind,
      ph: 'X',
      ts: micro(s.start),
      dur: micro(s.end - s.start),
      pid: MODEL_PID,
      tid: s.ipu,
      args: { cycles: Math.round((s.end - s.start) * spec.clockHz) },
    }),
  );
  return {
    traceEvents: [...metadata, ...events],
    displayTimeUnit: 'ms',
    otherData: {
      model: executable.modelName,
      kind: executable.kind,
      strategy: executable.placement.strategy,
      clockHz: spec.clockHz,
      cyclesPerCall: timeline.cycles,
    },
  };
}
