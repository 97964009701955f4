import { describe, expect, it } from 'vitest';
import { popart } from 'poptfjs';

const { AnchorReturnType, AnchorReturnTypeSpec, DataFlow } = popart;

describe('AnchorReturnType and DataFlow', () => {
  it('makes return types without new, in any case, with a period for EveryN only', () => {
    const all = AnchorReturnType('ALL');
    expect(all).toBeInstanceOf(AnchorReturnTypeSpec);
    expect([all.id, all.rp(), String(all)]).toEqual(['All', 1, 'AnchorReturnType("All")']);
    const everyN = AnchorReturnType('everyn', 3);
    expect([everyN.id, everyN.period, String(everyN)]).toEqual(['EveryN', 3, 'AnchorReturnType("EveryN", 3)']);
    expect(AnchorReturnType('Final').id).toBe('Final');
    expect(AnchorReturnType('sum').id).toBe('Sum');
    expect(() => AnchorReturnType('Mean')).toThrow(/AnchorReturnType: \[0\] = "Mean" is invalid: 'Mean' is not a return type; expected one of All, Final, Sum, EveryN/);
    expect(() => AnchorReturnType('EveryN')).toThrow(/EveryN needs a return period/);
    expect(() => AnchorReturnType('All', 2)).toThrow(/a return period only applies to EveryN, not All/);
    expect(() => AnchorReturnType('EveryN', 0)).toThrow(/AnchorReturnType: \[1\] = 0 is invalid/);
  });

  it('holds the batches per step and the anchors, given by return type or as names sharing one', () => {
    const flow = new DataFlow(4, { out: AnchorReturnType('All'), hidden: AnchorReturnType('EveryN', 2) });
    expect([flow.batchesPerStep(), flow.anchors(), flow.nAnchors(), flow.isAnchored('out'), flow.isAnchored('x')]).toEqual([4, ['out', 'hidden'], 2, true, false]);
    expect(flow.art('hidden').period).toBe(2);
    const named = new DataFlow(2, ['a', 'b'], AnchorReturnType('Sum'));
    expect(named.anchors().map((n) => named.art(n).id)).toEqual(['Sum', 'Sum']);
    expect(new DataFlow(1, ['a']).art('a').id).toBe('All');
    expect(() => flow.art('x')).toThrow(/'x' is not anchored; the anchors are 'out', 'hidden'/);
  });

  it('refuses batches per step, anchors and periods that do not fit', () => {
    expect(() => new DataFlow(0, {})).toThrow(/DataFlow: batchesPerStep: 0 is invalid/);
    expect(() => new DataFlow(1.5, {})).toThrow(/batchesPerStep: 1.5 is invalid/);
    // PopART's tests/integration/dataflowtest.cpp, DataFlow_Case4 and DataFlow_Case5.
    expect(() => new DataFlow(5, { one: AnchorReturnType('EveryN', 6) })).toThrow(
      "Return period must be <= to the number of batches per step (DataFlow: anchor 'one' is returned every 6 batches, and each run processes 5)",
    );
    expect(() => new DataFlow(5, { one: AnchorReturnType('EveryN', 3) })).toThrow(
      "Return period must be a factor of the number of batches per step (DataFlow: anchor 'one' is returned every 3 batches, and each run processes 5)",
    );
    expect(new DataFlow(6, { one: AnchorReturnType('EveryN', 3) }).art('one').period).toBe(3);
    expect(() => new DataFlow(1, { out: 'All' as never })).toThrow(/anchor 'out': "All" is invalid: expected an AnchorReturnType/);
  });
});
