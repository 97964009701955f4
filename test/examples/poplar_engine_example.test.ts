import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

describe('poplar-engine.ts', () => {
  it('drives an exported executable through an Engine in a fresh process: streams, steps, a weight, the profile, and a simulated error and its recovery', () => {
    const { status, stdout, stderr } = runProgram('examples/poplar-engine.ts');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(stdout).toContain('programs: 0 weightsFromHost, 1 optimizerFromHost, 2 step, 3 weightsToHost');
    expect(stdout).toContain('streams: input0+ input1+ output0- loss- weightsFromHost/dense_Dense1/kernel+');
    const losses = [...stdout.matchAll(/^step \d: loss ([\d.]+)$/gm)].map((m) => Number(m[1]));
    expect(losses).toHaveLength(3);
    expect(losses[2]!).toBeLessThan(losses[0]!);
    expect(stdout).toMatch(/^Device: \d+ cycles, [\d.]+ ms at 1330\.0 MHz \(simulated\)$/m);
    expect(stdout).toMatch(/^dense_Dense1\/kernel: \[(-?\d\.\d{4}, ){11}-?\d\.\d{4}\]$/m);
    expect(stdout).toContain('Programs run (execution profile):');
    expect(stdout).toMatch(/^intervals \(begin,end,compute tiles,exchange tiles,sync tiles\):\n(\d+,\d+,\d+,\d+,\d+\n)+/m);
    expect(stdout).toContain('caught: 1 error, simulated true, code MEMORY_ERROR, at the location planted true');
    expect(stdout).toContain('caught: simulated IPU_RESET at F0 on IPU 0, tile 0: recover with IPU_RESET');
    // Loaded again, the engine starts from the exported state: its first step's loss is the first engine's.
    expect(stdout).toContain(`after clearSimulatedErrors and load: loss ${losses[0]!.toFixed(6)}`);
    // The input stream's first sample, as the step's first kernel read it.
    expect(stdout).toMatch(
      /^the trace of one step \(\d+ lines\), its first lines:\ncompute set F0:0 \(IPU 0, replica 0\)\n {2}#0 Reshape \(dense_Dense1\)\n {4}before %0 float32\[2,4\]: \(\n {7}\(0\.5,-1,0\.25,2\)\n/m,
    );
  });
});
