/**
 * An engine's execution profile, as Poplar's: each run of a program is
 * appended (its index, name, debug name, and the simulated device cycles it
 * started at and took), up to `autoReport.executionProfileProgramRunCount`
 * runs of each program; profiling can be paused and resumed
 * (`disableExecutionProfiling` / `enableExecutionProfiling`) and the runs
 * recorded so far discarded (`resetExecutionProfile`). The timeline of the
 * recorded runs of the step, in tile clock cycles, is what `reportIntervals`
 * writes as Poplar's CSV of intervals.
 */
import type { Executable } from '../executable/executable.js';
import type { ProgramName } from '../executable/program.js';
import type { TimelineSegment } from '../ipu/timeline.js';
import type { StepInstrumentation } from './step_instrumentation.js';

/** One run of a program, in simulated device time. */
export interface ProgramRun {
  /** The program's index (`Engine.run(index)`). */
  readonly program: number;
  readonly name: ProgramName;
  /** The run's name given to `Engine.run` ('' if none). */
  readonly debugName: string;
  /** Device cycles since the engine was loaded when the run began. */
  readonly startCycle: number;
  /** Device cycles the run took. */
  readonly cycles: number;
  /** For a run of the step, what the instrumentation options record of it (step_instrumentation.ts). */
  readonly instrumentation?: StepInstrumentation;
}

/** The runs an engine recorded. */
export class ExecutionProfile {
  private readonly recorded: ProgramRun[] = [];
  private paused = false;

  /**
   * @param instrumented whether the engine counts cycles at all (any `debug.instrument*` switch, `debug.instrument` by default, which the execution profile of `autoReport` sets)
   * @param runsPerProgram how many runs of each program are kept (`autoReport.executionProfileProgramRunCount`)
   */
  constructor(
    readonly instrumented: boolean,
    private readonly runsPerProgram: number,
  ) {}

  /** True while runs are recorded: the engine is instrumented and profiling is not paused. */
  get recording(): boolean {
    return this.instrumented && !this.paused;
  }

  /** Pauses or resumes recording. */
  setPaused(paused: boolean): void {
    this.paused = paused;
  }

  /** Appends a run, unless recording is off or its program already has all the runs kept. */
  add(run: ProgramRun): void {
    if (!this.recording) return;
    if (this.recorded.filter((r) => r.program === run.program).length >= this.runsPerProgram) return;
    this.recorded.push(run);
  }

  /** The runs recorded, in order. */
  get runs(): readonly ProgramRun[] {
    return this.recorded;
  }

  /** Discards the runs recorded so far. */
  reset(): void {
    this.recorded.length = 0;
  }
}

/** A tile count per kind of work over one stretch of tile clock cycles (a row of Poplar's intervals CSV). */
export interface ActivityInterval {
  readonly begin: number;
  readonly end: number;
  readonly computeTiles: number;
  readonly exchangeTiles: number;
  readonly syncTiles: number;
}

/** Which column of the intervals a timeline segment counts in: computing (the optimizer's update too), exchanging (on chip, over the IPU-Links, with streaming memory or the host), or synchronising. */
function intervalColumn(segment: TimelineSegment): 'computeTiles' | 'exchangeTiles' | 'syncTiles' {
  switch (segment.kind) {
    case 'compute':
    case 'update':
      return 'computeTiles';
    case 'sync':
      return 'syncTiles';
    default:
      return 'exchangeTiles';
  }
}

/**
 * The intervals of the step's recorded runs: the step's timeline (one call)
 * placed at each run's start cycle; a segment occupies every tile of its IPU
 * from its first cycle to its last. Adjacent stretches with the same counts
 * are merged; stretches with no tile busy are left out.
 */
export function activityIntervals(executable: Executable, runs: readonly ProgramRun[]): ActivityInterval[] {
  const { timeline, spec } = executable.hardware;
  const toCycles = (seconds: number) => Math.round(seconds * spec.clockHz);
  const events: Array<{ at: number; column: 'computeTiles' | 'exchangeTiles' | 'syncTiles'; tiles: number }> = [];
  for (const run of runs) {
    if (run.name !== 'step') continue;
    for (const segment of timeline.segments) {
      const begin = run.startCycle + toCycles(segment.start);
      const end = run.startCycle + toCycles(segment.end);
      if (end <= begin) continue;
      const column = intervalColumn(segment);
      events.push({ at: begin, column, tiles: spec.tiles }, { at: end, column, tiles: -spec.tiles });
    }
  }
  events.sort((a, b) => a.at - b.at);
  const intervals: ActivityInterval[] = [];
  const counts = { computeTiles: 0, exchangeTiles: 0, syncTiles: 0 };
  for (let i = 0; i < events.length; ) {
    const at = events[i]!.at;
    for (; i < events.length && events[i]!.at === at; i++) counts[events[i]!.column] += events[i]!.tiles;
    const next = events[i]?.at;
    if (next === undefined || counts.computeTiles + counts.exchangeTiles + counts.syncTiles === 0) continue;
    const last = intervals[intervals.length - 1];
    if (last && last.end === at && last.computeTiles === counts.computeTiles && last.exchangeTiles === counts.exchangeTiles && last.syncTiles === counts.syncTiles) {
      intervals[intervals.length - 1] = { ...last, end: next };
    } else {
      intervals.push({ begin: at, end: next, ...counts });
    }
  }
  return intervals;
}

/** The intervals as Poplar's CSV: one row per interval, `begin,end,compute tiles,exchange tiles,sync tiles`, in tile clock cycles. */
export function intervalsCsv(intervals: readonly ActivityInterval[]): string {
  return intervals.map((i) => `${i.begin},${i.end},${i.computeTiles},${i.exchangeTiles},${i.syncTiles}\n`).join('');
}
