/**
 * `ops.CPU`: a function run on the host in the middle of a model, traced as
 * `poptfjs.CpuOp`, with its host transfers and sync on the timeline.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { GC200, Options, inferenceModel, load, ops, optim, plan, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

describe('ops.CPU', () => {
  it("runs its function with the inputs' real values, as PopTorch's simple CPU op tests", async () => {
    const cpu = new ops.CPU((x, y) => tf.mul(x!, y!), 'MyCPUOp');
    const executor = inferenceModel((x: tf.Tensor, y: tf.Tensor) => tf.mul(cpu(x, y) as tf.Tensor, 3));
    const x = tf.randomNormal([5, 2, 3, 5]);
    expectClose((await executor.run(x, tf.tensor1d([2]))) as tf.Tensor, tf.mul(x, 6));
    expectClose((await executor.run(x, tf.tensor1d([4]))) as tf.Tensor, tf.mul(x, 12));
    expect(executor.executable.graph.nodes.map((n) => n.kernel)).toEqual(['poptfjs.CpuOp', 'Multiply']);
    expect(executor.irText()).toMatch(/= poptfjs\.CpuOp\(%\d+, %\d+\) \{id="MyCPUOp", index=0, outputShapes=\[\[5,2,3,5\]\], outputDtypes=\["float32"\]\}/);
  });

  it('hands back several outputs, and runs its function once per micro-batch on that micro-batch', async () => {
    const seen: number[][] = [];
    const cpu = new ops.CPU((x) => {
      seen.push([...x!.dataSync()]);
      return [tf.mul(x!, 2), tf.sum(x!)];
    }, 'TwoOutputs');
    const executor = inferenceModel(
      (x: tf.Tensor) => {
        const [doubled, total] = cpu(tf.add(x, 1)) as tf.Tensor[];
        return [tf.neg(doubled!), total!];
      },
      { options: new Options().deviceIterations(3) },
    );
    const x = tf.tensor2d([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    await executor.compile(x);
    seen.length = 0;
    const [negated, totals] = (await executor.run(x)) as tf.Tensor[];
    expect(seen).toEqual([
      [2, 3],
      [4, 5],
      [6, 7],
    ]);
    expectClose(negated!, tf.neg(tf.mul(tf.add(x, 1), 2)));
    expectClose(totals!, tf.tensor1d([5, 9, 13]));
  });

  it('chains calls of several CPU ops, and outside a model simply calls its function', async () => {
    const double = new ops.CPU((x) => tf.mul(x!, 2), 'Double');
    const add = new ops.CPU((x, y) => tf.add(x!, y!), 'Add');
    const fn = (x: tf.Tensor, y: tf.Tensor) => {
      let out = x;
      for (let i = 0; i < 3; i++) out = add(double(out) as tf.Tensor, y) as tf.Tensor;
      return out;
    };
    const x = tf.tensor1d([1, -2, 0.5]);
    const y = tf.tensor1d([0.25, 1, -1]);
    const expected = fn(x, y);
    expectClose(expected, tf.add(tf.mul(x, 8), tf.mul(y, 7)));
    const executor = inferenceModel(fn);
    expectClose((await executor.run(x, y)) as tf.Tensor, expected);
    expect(executor.executable.graph.nodes.filter((n) => n.kernel === 'poptfjs.CpuOp')).toHaveLength(6);
  });

  it('shows its host transfers, both ways, and its sync with the host on the timeline', async () => {
    const cpu = new ops.CPU((x) => tf.concat([x!, x!]), 'Concat');
    const executor = inferenceModel((x: tf.Tensor) => tf.relu(cpu(tf.neg(x)) as tf.Tensor));
    await executor.compile(tf.zeros([1000]));
    const segments = executor.executable.hardware.timeline.segments;
    const of = (label: string) => segments.filter((s) => s.label === label).map((s) => s.end - s.start);
    // 1000 float32 (4000 bytes) to the host and 2000 (8000 bytes) back, at the GC200's 5.5 GB/s host link;
    // the sync: one 15 ns hop there and back.
    expect(GC200.hostLinkBandwidth).toBe(5.5e9);
    const toHost = of('device → host (CPU op)');
    const fromHost = of('host → device (CPU op)');
    expect(toHost).toHaveLength(1);
    expect(toHost[0]).toBeCloseTo(4000 / 5.5e9, 15);
    expect(fromHost[0]).toBeCloseTo(8000 / 5.5e9, 15);
    expect(of('host sync (CPU op)')[0]).toBeCloseTo(30e-9, 15);
    expect(segments.find((s) => s.label === 'host sync (CPU op)')!.kind).toBe('sync');
    // They follow one another within the step.
    const at = (label: string) => segments.find((s) => s.label === label)!;
    expect(at('host sync (CPU op)').start).toBeCloseTo(at('device → host (CPU op)').end, 15);
    expect(at('host → device (CPU op)').start).toBeCloseTo(at('host sync (CPU op)').end, 15);
  });

  it('runs from a loaded executable, finding its function by id, and names an id no CPU op has', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-cpu-op-')), 'cpu.poptfjs');
    const x = tf.tensor1d([1, 2]);
    const cpu = new ops.CPU((v) => tf.mul(v!, 10), 'Saved');
    await inferenceModel((v: tf.Tensor) => cpu(v) as tf.Tensor).compileAndExport(file, x);
    expectClose((await (await load(file)).run(x)) as tf.Tensor, tf.tensor1d([10, 20]));
    const renamed = file.replace('cpu.poptfjs', 'other.poptfjs');
    const other = new ops.CPU((v) => tf.mul(v!, 10), 'NeverCreatedElsewhere');
    await inferenceModel((v: tf.Tensor) => other(v) as tf.Tensor).compileAndExport(renamed, x);
    // Another op of the same name made since: the executable still runs the function of its own op.
    new ops.CPU((v) => tf.mul(v!, -1), 'NeverCreatedElsewhere');
    expectClose((await (await load(renamed)).run(x)) as tf.Tensor, tf.tensor1d([10, 20]));
    // A node of an op not made in this process (an executable from another program) runs the op of its name made last.
    expectClose(tf.engine().runKernel('poptfjs.CpuOp', [x] as never, { id: 'NeverCreatedElsewhere', index: 7 }) as tf.Tensor, tf.tensor1d([-1, -2]));
    // A node whose id no CPU op of this process has (an executable from another program).
    expect(() => tf.engine().runKernel('poptfjs.CpuOp', [x] as never, { id: 'Elsewhere' })).toThrow(
      "CPU op 'Elsewhere' has no host function in this process: create it with new ops.CPU(fn, 'Elsewhere') before running the model",
    );
  });

  it("checks each run's results against the outputs the trace declared, and names the op and the output", async () => {
    let result: () => unknown = () => tf.ones([2, 3]);
    const cpu = new ops.CPU(() => result() as tf.Tensor, 'Checked');
    const executor = inferenceModel((v: tf.Tensor) => tf.add(cpu(v) as tf.Tensor, 1));
    const x = tf.zeros([2, 3]);
    expectClose((await executor.run(x)) as tf.Tensor, tf.fill([2, 3], 2));
    const traced = 'declared by what it returned when the model was traced';
    const cases: Array<[() => unknown, string]> = [
      [() => tf.ones([3, 2]), `CPU op 'Checked': output 0 of its function is float32[3,2], but float32[2,3] is ${traced}`],
      [() => tf.ones([2, 3], 'int32'), `CPU op 'Checked': output 0 of its function is int32[2,3], but float32[2,3] is ${traced}`],
      [() => tf.ones([2, 3], 'bool'), "CPU op 'Checked': output 0 of its function is bool[2,3]; CPU ops return float32 or int32 tensors"],
      [() => tf.tensor(['a']), "CPU op 'Checked': output 0 of its function is string[1]; CPU ops return float32 or int32 tensors"],
      [() => [tf.ones([2, 3]), tf.ones([1])], `CPU op 'Checked': its function returned 2 tensor(s) where 1 (float32[2,3]) are ${traced}`],
      [() => [], "CPU op 'Checked': its function returned no tensor; it must return a tf.Tensor or a list of them"],
      [
        () => {
          const t = tf.ones([2, 3]);
          t.dispose();
          return t;
        },
        "CPU op 'Checked': output 0 of its function is a disposed tensor; return tensors the function keeps alive",
      ],
    ];
    for (const [make, message] of cases) {
      result = make;
      await expect(executor.run(x)).rejects.toThrow(message);
    }
    result = () => tf.fill([2, 3], 5);
    expectClose((await executor.run(x)) as tf.Tensor, tf.fill([2, 3], 6));
  });

  it('keeps each model its own function when two CPU ops have one id', async () => {
    const double = new ops.CPU((v) => tf.mul(v!, 2), 'Same');
    const first = inferenceModel((v: tf.Tensor) => double(v) as tf.Tensor);
    const x = tf.tensor1d([1, 2]);
    await first.compile(x);
    const negate = new ops.CPU((v) => tf.neg(v!), 'Same');
    const second = inferenceModel((v: tf.Tensor) => negate(v) as tf.Tensor);
    expectClose((await second.run(x)) as tf.Tensor, tf.tensor1d([-1, -2]));
    expectClose((await first.run(x)) as tf.Tensor, tf.tensor1d([2, 4]));
  });

  it('has no gradient: training through it is an error naming it', async () => {
    const cpu = new ops.CPU((v) => tf.mul(v!, 2), 'InTraining');
    const w = tf.variable(tf.ones([2]), true);
    const executor = trainingModel(
      (v: tf.Tensor) => {
        const y = cpu(tf.mul(v, w)) as tf.Tensor;
        return [y, ops.identityLoss(tf.sum(y), 'sum')];
      },
      { optimizer: new optim.SGD([w], { lr: 0.1 }) },
    );
    await expect(executor.compile(tf.ones([2]))).rejects.toThrow(
      "CPU op 'InTraining' has no gradient: CPU ops run in inference models only, as in PopTorch; keep it off the path from the weights to the loss",
    );
  });

  it('cannot be planned with shapes only, and plan() says so, naming the kernel', async () => {
    const cpu = new ops.CPU((v) => tf.add(v!, 1), 'Planned');
    await expect(plan(() => (x: tf.Tensor) => cpu(tf.relu(x)) as tf.Tensor, { inputs: [{ shape: [4, 8] }] })).rejects.toThrow(
      "poptfjs is planning with shapes only and cannot plan kernel 'poptfjs.CpuOp': its outputs are what the CPU op's host function returns for the values of its inputs",
    );
  });

  it('refuses what it cannot run', () => {
    expect(() => new ops.CPU(3 as never, 'x')).toThrow('CPU: expected a function to run on the host, got number');
    expect(() => new ops.CPU((v) => v!, '')).toThrow('CPU: the id must be a non-empty string, got ""');
    expect(() => new ops.CPU((v) => v!, 'Id')(3 as never)).toThrow("CPU: argument 0 of CPU op 'Id' is not a tf.Tensor");
  });
});
