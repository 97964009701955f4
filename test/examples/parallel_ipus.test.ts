import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

describe('examples/parallel-ipus.ts', () => {
  it('trains a pipelined model on worker IPUs with the losses of in-process execution, and reports the measured overlap; the process exits', () => {
    const { status, stdout, stderr } = runProgram('examples/parallel-ipus.ts');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const losses = [...stdout.matchAll(/^step (\d): loss ([\d.]+) on worker IPUs, ([\d.]+) in-process$/gm)];
    expect(losses.map((m) => Number(m[1]))).toEqual([0, 1, 2, 3]);
    for (const [, , workers, inProcess] of losses) expect(workers).toBe(inProcess);
    expect(Number(losses[3]![2])).toBeLessThan(Number(losses[0]![2]));
    expect(stdout).toContain('identical losses: true');
    expect(stdout).toContain('PipelinedExecution: 2 stage(s) on 2 IPU(s) per replica');
    expect(stdout).toMatch(
      /^Measured on the host, last call, IPUs on worker threads \(parallelIpus\):\n {2}wall: [\d.]+ ms, overlap [\d.]+ \(sum of busy time \/ wall time\)$/m,
    );
    expect(stdout).toMatch(/^ {2}0 +[\d.]+ ms +[\d.]+% +[\d.]+ ms +16 +[\d.]+%$/m);
    expect(stdout).toMatch(/^ {2}1 +[\d.]+ ms +[\d.]+% +[\d.]+ ms +16 +[\d.]+%$/m);
  });
});
