import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

function run(example: string): string {
  const { status, stdout, stderr } = runProgram(`examples/${example}.ts`);
  expect(stderr).toBe('');
  expect(status).toBe(0);
  return stdout;
}

describe('multi-IPU examples', () => {
  it('blocks.ts: four Blocks on four IPUs, pipelined over four device iterations', () => {
    const out = run('blocks');
    expect(out).toContain('PipelinedExecution: 4 stage(s) on 4 IPU(s) per replica, 4 IPU(s) reserved');
    expect(out).toMatch(/^3\s+F0:3\s+F1:2\s+F2:1\s+F3:0\s+steady$/m);
  });

  it('block-function.ts: two BlockFunctions and a third block on the second IPU', () => {
    const out = run('block-function');
    expect(out).toContain("stage 1 (id 1) on IPU 1: blocks '1', '2'");
  });

  it('begin-block-encoder.ts: BeginBlock splits an encoder over four IPUs and matches model.predict', () => {
    const out = run('begin-block-encoder');
    expect(out).toMatch(/output \[4, 8, 2\], largest difference from model.predict: 0\.00e\+0/);
    expect(out).toContain("stage 3 (id 3) on IPU 3: blocks '2'");
  });

  it('auto-stage.ts: SameAsIpu refuses IPUs 0, 1, 0; AutoIncrement compiles; Stages group blocks', () => {
    const out = run('auto-stage');
    expect(out).toContain("SameAsIpu: PipelinedExecution: block '2' on IPU 0 gets stage 0, but it runs after block '1' on IPU 1 with stage 1");
    expect(out).toContain('AutoIncrement: stage 0 on IPU 0, stage 1 on IPU 1, stage 2 on IPU 0');
    expect(out).toContain("stage 0 (id 0) on IPU 0: blocks 'A', 'B'");
  });

  it('phases.ts: regrouped stages run in turn, separate stages in parallel', () => {
    const out = run('phases');
    expect(out.match(/outputs: \[2, 4\] \[6, 8\] \[3, 6\]/g)).toHaveLength(2);
    expect(out).toMatch(/^0\s+F0:0\s+F1:0\s+F2:0\s+0$/m);
  });

  it('phased-execution.ts: serial and parallel phased training give the same losses', () => {
    const out = run('phased-execution');
    const serial = out.match(/serial phased losses: (.*)/)![1];
    const parallel = out.match(/parallel phased losses: (.*)/)![1];
    expect(serial).toBe(parallel);
    expect(out).toMatch(/^2\s+F4:0 B4:0\s+F5:0 B5:0\s+2$/m);
  });

  it('phased-string-ids.ts: blocks named in a loop map onto alternating IPU groups', () => {
    const out = run('phased-string-ids');
    expect(out).toContain('ParallelPhasedExecution: 12 stage(s) on 4 IPU(s) per replica, 4 IPU(s) reserved');
    expect(out).toContain("stage 11 (id 11) on IPU 3, phase 5: blocks 'phase5_ipu1'");
    expect(out).toMatch(/loss after one step: \d+\.\d+/);
  });

  it('buffers.ts: a reassigned tensor is a constant (1, 1); a buffer keeps its value (1, 2)', () => {
    const out = run('buffers');
    expect(out).toContain('tensor: 1 then 1');
    expect(out).toContain('buffer: 1 then 2');
    expect(out).toContain('host buffer before copyWeightsToHost: 0');
    expect(out).toContain('host buffer after copyWeightsToHost: 2');
  });
});
