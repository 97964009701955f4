import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { optim, Options, readCheckpointFile, tf, trainingModel, type PoplarExecutor } from 'poptfjs';
import { ROOT } from '../run_program.js';
import { dropoutModel, linearModel, sample } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  losses: number[];
  weights: Float32Array[];
}

function makeExecutor(seed: number, options: () => Options): PoplarExecutor {
  const model = dropoutModel(seed);
  return trainingModel(model, { options: options(), loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.05, momentum: 0.9 }) });
}

async function steps(executor: PoplarExecutor, n: number, x: tf.Tensor, y: tf.Tensor): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const [output, loss] = (await executor(x, y)) as [tf.Tensor, tf.Tensor];
    out.push(...loss.dataSync());
    tf.dispose([output, loss]);
  }
  return out;
}

function hostWeights(executor: PoplarExecutor): Float32Array[] {
  executor.copyWeightsToHost();
  return (executor.model as tf.LayersModel).getWeights().map((w) => Float32Array.from(w.dataSync()));
}

describe('checkpoints', () => {
  for (const [name, options, batch] of [
    ['one replica', () => new Options().randomSeed(3), 4],
    [
      'two replicas, gradient accumulation, own buffers',
      () => {
        const o = new Options().randomSeed(3).replicationFactor(2).deviceIterations(2).broadcastBuffers(false);
        o.Training.gradientAccumulation(2);
        return o;
      },
      16,
    ],
  ] as const) {
    it(`resuming at step 3 of 7 reproduces the uninterrupted run bit for bit (${name}: weights, momentum, dropout RNG)`, async () => {
      const x = tf.randomNormal([batch, 8], 0, 1, 'float32', 11);
      const y = tf.randomNormal([batch, 4], 0, 1, 'float32', 12);
      const uninterrupted = makeExecutor(0, options);
      const reference: Run = { losses: await steps(uninterrupted, 7, x, y), weights: hostWeights(uninterrupted) };
      uninterrupted.destroy();

      const first = makeExecutor(0, options);
      const before = await steps(first, 3, x, y);
      const path = join(dir, `resume-${batch}.ckpt`);
      first.saveCheckpoint(path);
      first.destroy();
      expect(readCheckpointFile(path).deviceState.iterations).toBe(3 * (batch === 16 ? 2 : 1));

      const resumed = makeExecutor(99, options);
      await resumed.loadCheckpoint(path);
      const after = await steps(resumed, 4, x, y);
      expect([...before, ...after]).toEqual(reference.losses);
      const weights = hostWeights(resumed);
      weights.forEach((w, i) => expect(Buffer.from(w.buffer).equals(Buffer.from(reference.weights[i]!.buffer)), `weight ${i}`).toBe(true));
      resumed.destroy();
    });
  }

  it('refuses a checkpoint of another model, naming the first difference, and warns about other optimizer values', async () => {
    const [x, y] = sample();
    const saver = trainingModel(linearModel(), { loss: 'meanSquaredError' });
    tf.dispose(await saver(x, y));
    const path = join(dir, 'linear.ckpt');
    saver.saveCheckpoint(path);
    saver.destroy();

    const other = trainingModel(tf.sequential({ layers: [tf.layers.dense({ units: 10, inputShape: [10], useBias: false })] }), { loss: 'meanSquaredError' });
    await expect(other.loadCheckpoint(path)).rejects.toThrow(`${path} does not match the wrapped model: the file has 2 parameter(s), the model 1`);
    other.destroy();

    const model = linearModel(5);
    const faster = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.5 }) });
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await faster.loadCheckpoint(path);
    const log = spy.mock.calls.map((c) => String(c[0])).join('');
    spy.mockRestore();
    expect(log).toMatch(/the checkpoint was saved with optim\.SGD\(lr=0\.01.*this executor's optim\.SGD\(lr=0\.5/);
    const restored = (faster.model as tf.LayersModel).getWeights()[0]!.dataSync();
    expect(Array.from(restored)).toEqual(Array.from(readCheckpointFile(path).deviceState.weights!.values().next().value![0]!.data as Float32Array));
    faster.destroy();
  });

  /** Runs `program` on a fresh directory, kills it (SIGKILL) a random time after it is ready, and returns the directory. */
  async function killWhileSaving(program: string, k: number): Promise<string> {
    const trialDir = mkdtempSync(join(dir, `crash-${k}-`));
    const child = spawn(process.execPath, ['--import', 'tsx', program, trialDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        if (d.toString().includes('ready')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`${program} exited (${code}) before it was ready: ${stderr}`)));
    });
    await new Promise((r) => setTimeout(r, Math.random() * 60));
    child.kill('SIGKILL');
    await exited;
    return trialDir;
  }

  async function trials(count: number, parallel: number, run: (k: number) => Promise<void>): Promise<void> {
    for (let k = 0; k < count; k += parallel) await Promise.all(Array.from({ length: Math.min(parallel, count - k) }, (_, i) => run(k + i)));
  }

  it('a process killed at random moments while writing checkpoints leaves the last complete one, never a torn file (16 kills)', async () => {
    let midWrite = 0;
    await trials(16, 4, async (k) => {
      const trialDir = await killWhileSaving('test/files/programs/checkpoint_file_writer.ts', k);
      const checkpoint = readCheckpointFile(join(trialDir, 'state.ckpt'));
      const generation = checkpoint.deviceState.iterations;
      const weights = checkpoint.deviceState.weights!.get('w')![0]!.data as Float32Array;
      expect(weights.every((w) => w === generation)).toBe(true);
      expect(checkpoint.deviceState.randomState[3]).toBe(generation + 1);
      if (readdirSync(trialDir).some((f) => f.endsWith('.tmp'))) midWrite++;
    });
    // Some kills landed while a file was being written (its temporary file is left behind).
    expect(midWrite).toBeGreaterThan(0);
  }, 60_000);

  it('a training process killed while saving checkpoints leaves one that resumes training (2 kills)', async () => {
    const dirs: string[] = [];
    await trials(2, 2, async (k) => {
      const trialDir = await killWhileSaving('test/files/programs/checkpoint_writer.ts', 100 + k);
      expect(readCheckpointFile(join(trialDir, 'state.ckpt')).deviceState.iterations).toBeGreaterThanOrEqual(1);
      dirs.push(trialDir);
    });
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 128, inputShape: [128], activation: 'relu' }), tf.layers.dense({ units: 128 })] });
    const resumed = trainingModel(model, {
      options: new Options().useIpuModel(true),
      loss: 'meanSquaredError',
      optimizer: new optim.SGD(model, { lr: 0.001, momentum: 0.9 }),
    });
    await resumed.loadCheckpoint(join(dirs[0]!, 'state.ckpt'));
    const [output, loss] = (await resumed(tf.zeros([2, 128]), tf.zeros([2, 128]))) as [tf.Tensor, tf.Tensor];
    expect(Number.isFinite(loss.dataSync()[0]!)).toBe(true);
    tf.dispose([output, loss]);
    resumed.destroy();
  }, 60_000);
});
