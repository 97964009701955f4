import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

function run(example: string): string {
  const { status, stdout, stderr } = runProgram(`examples/${example}.ts`);
  expect(stderr).toBe('');
  expect(status).toBe(0);
  return stdout;
}

describe("the PopART guide's Session examples, on torchvision's SqueezeNet", () => {
  it('popart-importing-graphs.ts: imports the exported model into an InferenceSession fetching 100 batches of its output', () => {
    const out = run('popart-importing-graphs');
    expect(out).toContain("input 'input.1': FLOAT [4, 3, 64, 64] per batch");
    expect(out).toContain("anchor 'output': [4, 10] per batch, [100, 4, 10] per run");
  });

  it('popart-training-session.ts: appends an NLL loss with the Builder and trains with ConstSGD, the loss falling', () => {
    const out = run('popart-training-session');
    expect(out).toMatch(/^training 34 weights of .*squeezenet\.onnx with the loss 'Nll:0'$/m);
    const losses = [...out.matchAll(/^step \d: losses (.*)$/gm)].flatMap((m) => m[1]!.split(' ').map(Number));
    expect(losses).toHaveLength(12);
    losses.slice(1).forEach((loss, i) => expect(loss).toBeLessThan(losses[i]!));
  });

  it("popart-executing-imported-graph.ts: runs the model with a StepIO and matches PyTorch's output within 1e-4", () => {
    const out = run('popart-executing-imported-graph');
    expect(out).toContain("Inputs name: [ 'input.1' ]");
    const difference = Number(/largest difference from PyTorch's output: (\S+)/.exec(out)![1]);
    expect(difference).toBeLessThan(1e-4);
  });

  it('popart-device-selection.ts: runs the same model on the CPU, the IPU Model and acquired IPUs, one of them on demand', () => {
    const out = run('popart-device-selection');
    expect(out).toContain('the system has 31 devices: 16 single IPUs, then groups of 2 to 16');
    expect(out).toMatch(/^acquireDeviceById\(5\): Ipu device 5 of 1 IPU\(s\) \[5\], attached when acquired/m);
    expect(out).toMatch(/^acquireAvailableDevice\(4, OnDemand\): Ipu device \d+ of 4 IPU\(s\) .*, attached on the first run/m);
    const outputs = [...out.matchAll(/output (.*) \.\.\.$/gm)].map((m) => m[1]);
    expect(outputs).toHaveLength(5);
    expect(new Set(outputs).size).toBe(1);
  });
});
