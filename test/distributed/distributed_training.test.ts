import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';

const EXAMPLE = ['examples/distributed-training.ts', '--print-weights'];

/** The final weights each instance printed (`{"instance":i,"weights":[...]}`, prefixed with `[i] ` under poptfjs run), by instance. */
function weightsByInstance(stdout: string): number[][] {
  const found: number[][] = [];
  for (const line of stdout.split('\n')) {
    const json = line.replace(/^\[\d+\] /, '');
    if (!json.startsWith('{')) continue;
    const { instance, weights } = JSON.parse(json) as { instance: number; weights: number[][] };
    found[instance] = weights.flat();
  }
  return found;
}

/** The example run alone as one process of `replicas` replicas (the layout poptfjs run gives a single instance, without MPI), reading the global batches of 2 instances. */
function singleProcess(replicas: number): number[] {
  const { status, stdout, stderr } = runProgram(EXAMPLE[0]!, [...EXAMPLE.slice(1), '--as-instances', '2'], {
    POPDIST_NUM_TOTAL_REPLICAS: String(replicas),
    POPDIST_NUM_LOCAL_REPLICAS: String(replicas),
    POPDIST_REPLICA_INDEX_OFFSET: '0',
  });
  expect(status, stderr).toBe(0);
  expect(stdout).toContain(`instance 0 of 1 (${replicas} replicas in all): final weights checksum`);
  const [weights] = weightsByInstance(stdout);
  return weights!;
}

/** The example under `npx poptfjs run` with 2 instances and `replicas` replicas in all; the weights of each instance. */
function twoInstances(replicas: number): number[][] {
  const { status, stdout, stderr } = runProgram('bin/poptfjs.ts', [
    'run',
    '--num-instances',
    '2',
    '--num-replicas',
    String(replicas),
    '--',
    process.execPath,
    '--import',
    'tsx',
    ...EXAMPLE,
  ]);
  expect(status, stderr).toBe(0);
  // Instance 0 shows the gradient all-reduce of its summary report: Dense(8 → 16) and Dense(16 → 1) with biases, 161 float32 gradients.
  expect(stdout).toContain("[0]   644 B of gradients per update, 2(2-1)/2 of them over each instance's link");
  const weights = weightsByInstance(stdout);
  expect(weights).toHaveLength(2);
  return weights;
}

function expectClose(actual: number[], expected: number[]): void {
  expect(actual).toHaveLength(expected.length);
  const worst = Math.max(...actual.map((w, i) => Math.abs(w - expected[i]!)));
  expect(worst).toBeLessThan(1e-5);
}

describe('examples/distributed-training.ts under npx poptfjs run', () => {
  it('2 instances × 1 replica end with the weights of one process with replicationFactor(2), on the same global batches', () => {
    const expected = singleProcess(2);
    for (const weights of twoInstances(2)) expectClose(weights, expected);
    // Alone, with 1 replica, it takes other steps (global batches of 4 samples, not 8): the comparison can fail.
    const alone = weightsByInstance(runProgram(EXAMPLE[0]!, EXAMPLE.slice(1)).stdout)[0]!;
    expect(Math.max(...alone.map((w, i) => Math.abs(w - expected[i]!)))).toBeGreaterThan(1e-3);
  }, 120_000);

  it('2 instances × 2 replicas end with the weights of one process with replicationFactor(4), on the same global batches', () => {
    const expected = singleProcess(4);
    for (const weights of twoInstances(4)) expectClose(weights, expected);
  }, 120_000);
});
