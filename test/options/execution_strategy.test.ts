import { describe, expect, it } from 'vitest';
import {
  AutoStage,
  executionStrategyFromJSON,
  isExecutionStrategy,
  Liveness,
  OptionsDataError,
  ParallelPhasedExecution,
  ParallelPhasedExecutionSpec,
  Phase,
  PhaseSpec,
  PipelinedExecution,
  PipelinedExecutionSpec,
  SerialPhasedExecution,
  ShardedExecution,
  ShardedExecutionSpec,
  Stage,
  StageSpec,
} from '../../lib/options/index.js';

function loose<T>(value: unknown): T {
  return value as T;
}

describe('Stage', () => {
  it('is a factory and a constructor, and instanceof works both ways', () => {
    const called = Stage('A', 'B').ipu(1);
    const built = new Stage('C');
    expect(called).toBeInstanceOf(StageSpec);
    expect(built).toBeInstanceOf(Stage);
    expect(called.blocks).toEqual(['A', 'B']);
    expect(called.ipuId).toBe(1);
    expect(built.ipuId).toBeUndefined();
    expect(Stage.name).toBe('Stage');
  });

  it('ipu() is chainable and checked, naming the stage and the value', () => {
    const stage = Stage('A');
    expect(stage.ipu(3)).toBe(stage);
    expect(() => Stage('enc').ipu(-1)).toThrow(RangeError);
    expect(() => Stage('enc').ipu(-1)).toThrow('Stage("enc").ipu: expected a non-negative integer (an IPU id), got -1');
    expect(() => Stage('enc').ipu(loose('0'))).toThrow(TypeError);
  });

  it('refuses missing or non-string block ids', () => {
    expect(() => Stage()).toThrow('Stage: expected at least one block id');
    expect(() => Stage(loose(3))).toThrow(TypeError);
    expect(() => Stage(loose(3))).toThrow('Stage: block ids must be non-empty strings; argument 0 is 3');
    expect(() => Stage('A', '')).toThrow(RangeError);
  });

  it('serializes and prints as config-file syntax', () => {
    expect(Stage('A').toJSON()).toEqual({ blocks: ['A'] });
    expect(Stage('A', 'B').ipu(2).toJSON()).toEqual({ blocks: ['A', 'B'], ipu: 2 });
    expect(String(Stage('A', 'B').ipu(2))).toBe('Stage("A", "B").ipu(2)');
  });
});

describe('Phase', () => {
  it('takes stages, or block ids forming one stage', () => {
    const phase = Phase(Stage('A'), Stage('B'));
    expect(phase).toBeInstanceOf(PhaseSpec);
    expect(phase.stages.map((stage) => stage.blocks)).toEqual([['A'], ['B']]);
    const single = new Phase('A', 'B');
    expect(single.stages.map((stage) => stage.blocks)).toEqual([['A', 'B']]);
    expect(single).toBeInstanceOf(Phase);
  });

  it('ipus() assigns one IPU per stage and checks the count', () => {
    const phase = Phase(Stage('A'), Stage('B'));
    expect(phase.ipus(0, 2)).toBe(phase);
    expect(phase.stages.map((stage) => stage.ipuId)).toEqual([0, 2]);
    expect(phase.stage(1).ipuId).toBe(2);
    expect(() => phase.ipus(1)).toThrow('Phase(Stage("A"), Stage("B")).ipus: the phase has 2 stages but 1 IPUs were given');
    expect(() => phase.ipus(1, -3)).toThrow(RangeError);
    expect(phase.stages.map((stage) => stage.ipuId)).toEqual([0, 2]);
    expect(() => phase.stage(2)).toThrow('the phase has 2 stages, there is no stage 2');
  });

  it('refuses mixed or missing arguments', () => {
    expect(() => Phase()).toThrow(RangeError);
    expect(() => Phase(loose(Stage('A')), 'B')).toThrow(TypeError);
    expect(() => Phase(loose(Stage('A')), 'B')).toThrow('Phase: arguments must be either all Stages or all block ids');
  });
});

describe('PipelinedExecution and ShardedExecution', () => {
  it('default to AutoStage.SameAsIpu', () => {
    const strategy = PipelinedExecution();
    expect(strategy).toBeInstanceOf(PipelinedExecutionSpec);
    expect(strategy.type).toBe('PipelinedExecution');
    expect(strategy.autoStage).toBe(AutoStage.SameAsIpu);
    expect(strategy.stages).toEqual([]);
    expect(strategy.toJSON()).toEqual({ type: 'PipelinedExecution', autoStage: 'SameAsIpu', stages: [] });
    expect(String(strategy)).toBe('PipelinedExecution(AutoStage.SameAsIpu)');
  });

  it('accept an AutoStage policy', () => {
    const strategy = new ShardedExecution(AutoStage.AutoIncrement);
    expect(strategy).toBeInstanceOf(ShardedExecutionSpec);
    expect(strategy.toJSON()).toEqual({ type: 'ShardedExecution', autoStage: 'AutoIncrement', stages: [] });
  });

  it('accept stages, block ids and arrays of block ids', () => {
    const strategy = PipelinedExecution(Stage('A').ipu(0), 'B', ['C', 'D']);
    expect(strategy.stages.map((stage) => stage.blocks)).toEqual([['A'], ['B'], ['C', 'D']]);
    expect(strategy.toJSON()).toEqual({
      type: 'PipelinedExecution',
      autoStage: 'SameAsIpu',
      stages: [{ blocks: ['A'], ipu: 0 }, { blocks: ['B'] }, { blocks: ['C', 'D'] }],
    });
  });

  it('refuse other arguments and blocks in two stages', () => {
    expect(() => PipelinedExecution(loose(3))).toThrow('PipelinedExecution: argument 0 must be a Stage, a block id or an array of block ids, got 3');
    expect(() => ShardedExecution('A', Stage('B', 'A'))).toThrow('ShardedExecution: block "A" is in more than one stage');
  });
});

describe('phased executions', () => {
  it('reproduce the seed example: phases, phase(i).ipus(...)', () => {
    const strategy = SerialPhasedExecution(Phase(Stage('A'), Stage('A2')), Phase(Stage('B'), Stage('B2')), Phase(Stage('C'), Stage('C2')));
    strategy.phase(0).ipus(0, 1);
    strategy.phase(1).ipus(0, 1);
    strategy.phase(2).ipus(0, 1);
    expect(strategy.toJSON()).toEqual({
      type: 'SerialPhasedExecution',
      phases: ['A', 'B', 'C'].map((name) => ({
        stages: [
          { blocks: [name], ipu: 0 },
          { blocks: [`${name}2`], ipu: 1 },
        ],
      })),
      separateBackwardPhase: false,
      tensorsLiveness: 'AlwaysLive',
    });
  });

  it('accept phases given as arrays of stages (the seed appends lists)', () => {
    const phases = [];
    for (let n = 0; n < 2; n += 1) {
      phases.push([Stage(`phase${2 * n}_ipu0`).ipu(0), Stage(`phase${2 * n}_ipu1`).ipu(2)]);
      phases.push([Stage(`phase${2 * n + 1}_ipu0`).ipu(1), Stage(`phase${2 * n + 1}_ipu1`).ipu(3)]);
    }
    const strategy = new ParallelPhasedExecution(...phases);
    expect(strategy).toBeInstanceOf(ParallelPhasedExecutionSpec);
    expect(strategy.phases).toHaveLength(4);
    expect(strategy.phase(1).stages.map((stage) => stage.ipuId)).toEqual([1, 3]);
  });

  it('record backward phases and liveness', () => {
    const strategy = ParallelPhasedExecution(Phase('A'), Phase('B')).useSeparateBackwardPhase(true).sendTensorsOffChipAfterFwd();
    expect(strategy.separateBackwardPhase).toBe(true);
    expect(strategy.tensorsLiveness).toBe(Liveness.OffChipAfterFwd);
    strategy.sendTensorsOffChipAfterFwd(false);
    expect(strategy.tensorsLiveness).toBe(Liveness.AlwaysLive);
    strategy.setTensorsLiveness(Liveness.OffChipAfterEachPhase);
    expect(String(strategy)).toBe(
      'ParallelPhasedExecution(Phase(Stage("A")), Phase(Stage("B"))).useSeparateBackwardPhase(true).setTensorsLiveness(Liveness.OffChipAfterEachPhase)',
    );
  });

  it('check their arguments', () => {
    expect(() => SerialPhasedExecution()).toThrow('SerialPhasedExecution: expected at least one phase (phased execution has no automatic staging), got none');
    expect(() => SerialPhasedExecution(loose(4))).toThrow(TypeError);
    expect(() => SerialPhasedExecution(Phase('A')).phase(1)).toThrow('SerialPhasedExecution.phase: the strategy has 1 phases, there is no phase 1');
    expect(() => SerialPhasedExecution(Phase('A')).setTensorsLiveness(loose('Sometimes'))).toThrow(
      'SerialPhasedExecution.setTensorsLiveness: expected one of Liveness.AlwaysLive, Liveness.OffChipAfterFwd, Liveness.OffChipAfterFwdNoOverlap, Liveness.OffChipAfterEachPhase, got "Sometimes"',
    );
    expect(() => SerialPhasedExecution(Phase('A')).useSeparateBackwardPhase(loose('yes'))).toThrow(TypeError);
    expect(() => SerialPhasedExecution(Phase('A'), Phase('A'))).toThrow('block "A" is in more than one stage');
  });
});

describe('executionStrategyFromJSON', () => {
  const strategies = [
    PipelinedExecution(),
    PipelinedExecution(AutoStage.AutoIncrement),
    ShardedExecution(Stage('A').ipu(0), Stage('B', 'C').ipu(1)),
    SerialPhasedExecution(Phase(Stage('A').ipu(0), Stage('B').ipu(1)), Phase('C')).useSeparateBackwardPhase(),
    ParallelPhasedExecution(Phase(Stage('x').ipu(0)), Phase(Stage('y').ipu(1))).setTensorsLiveness(Liveness.OffChipAfterFwdNoOverlap),
  ];

  it.each(strategies.map((strategy) => [String(strategy), strategy] as const))('rebuilds %s exactly', (_name, strategy) => {
    const rebuilt = executionStrategyFromJSON(JSON.parse(JSON.stringify(strategy)));
    expect(rebuilt.constructor).toBe(strategy.constructor);
    expect(rebuilt.toJSON()).toEqual(strategy.toJSON());
    expect(isExecutionStrategy(rebuilt)).toBe(true);
  });

  it('fills in defaults', () => {
    expect(executionStrategyFromJSON({ type: 'ShardedExecution' }).toJSON()).toEqual({ type: 'ShardedExecution', autoStage: 'SameAsIpu', stages: [] });
    expect(executionStrategyFromJSON({ type: 'SerialPhasedExecution', phases: [{ stages: [{ blocks: ['A'] }] }] }).toJSON()).toEqual({
      type: 'SerialPhasedExecution',
      phases: [{ stages: [{ blocks: ['A'] }] }],
      separateBackwardPhase: false,
      tensorsLiveness: 'AlwaysLive',
    });
  });

  it('names the path of bad data', () => {
    const bad = [
      [{ type: 'PipelinedExecution', stages: [{ blocks: ['A'], ipu: -1 }] }, ['stages', 0, 'ipu']],
      [{ type: 'PipelinedExecution', stages: [{ blocks: ['A'], where: 1 }] }, ['stages', 0, 'where']],
      [{ type: 'SerialPhasedExecution', phases: [] }, ['phases']],
      [{ type: 'Teleport' }, ['type']],
      [{ type: 'ShardedExecution', autoStage: 'AutoIncrement', stages: [{ blocks: ['A'] }] }, ['autoStage']],
      [{ type: 'ShardedExecution', stages: [{ blocks: ['A'] }, { blocks: ['A'] }] }, []],
    ] as const;
    for (const [data, path] of bad) {
      let thrown: unknown;
      try {
        executionStrategyFromJSON(data);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(data)).toBeInstanceOf(OptionsDataError);
      expect((thrown as OptionsDataError).path).toEqual(path);
    }
  });
});
