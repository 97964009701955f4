/**
 * Checkpoints: save the device state during training (weights, optimizer
 * state, loss scale, random generator, iteration count) and resume from it
 * in a freshly wrapped model, reproducing the uninterrupted run bit for bit,
 * dropout and momentum included. Checkpoints are written atomically: a crash
 * while saving leaves the previous one intact.
 *
 * Run: npx tsx examples/checkpoint-resume.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { optim, Options, tf, trainingModel } from 'poptfjs';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-'));
const checkpoint = join(dir, 'step3.ckpt');

function wrap(seed: number) {
  const model = tf.sequential({
    layers: [
      tf.layers.dense({ units: 16, inputShape: [8], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed }) }),
      tf.layers.dropout({ rate: 0.25 }),
      tf.layers.dense({ units: 4, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }) }),
    ],
  });
  const optimizer = new optim.SGD(model, { lr: 0.05, momentum: 0.9 });
  return trainingModel(model, { options: new Options().randomSeed(1), loss: 'meanSquaredError', optimizer });
}

const x = tf.randomNormal([4, 8], 0, 1, 'float32', 1);
const y = tf.randomNormal([4, 4], 0, 1, 'float32', 2);

async function train(executor: ReturnType<typeof wrap>, steps: number): Promise<string[]> {
  const losses: string[] = [];
  for (let i = 0; i < steps; i++) {
    const [output, loss] = await executor(x, y);
    losses.push(loss.dataSync()[0]!.toPrecision(9));
    tf.dispose([output, loss]);
  }
  return losses;
}

const uninterrupted = wrap(0);
const reference = await train(uninterrupted, 6);
uninterrupted.destroy();

const first = wrap(0);
const before = await train(first, 3);
first.saveCheckpoint(checkpoint);
first.destroy();

// A fresh model (other initial weights), restored from the checkpoint.
const resumed = wrap(42);
await resumed.loadCheckpoint(checkpoint);
const after = await train(resumed, 3);

console.log(`uninterrupted: ${reference.join(' ')}`);
console.log(`resumed:       ${[...before, ...after].join(' ')}`);
console.log(`identical: ${reference.join() === [...before, ...after].join()}`);
resumed.destroy();
rmSync(dir, { recursive: true, force: true });
