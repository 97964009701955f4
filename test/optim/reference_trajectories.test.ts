/**
 * Every optimizer trains a small MLP for 50 steps along the trajectory
 * PyTorch computes (torch.optim, or the published definition where torch
 * has none): test/fixtures/optim/make_reference_trajectories.py wrote the
 * losses and final weights into reference_trajectories.json.
 */
import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { describe, it } from 'vitest';
import { optim, trainingModel } from 'poptfjs';
import { expectClose, variableOf } from '../helpers.js';

interface ReferenceCase {
  name: string;
  optimizer: 'SGD' | 'Adam' | 'AdamW' | 'RMSprop' | 'LAMB';
  options: Record<string, unknown> & { paramGroups?: Array<Record<string, unknown> & { params: string[] }> };
  losses: number[];
  final: Record<string, number[] | number[][]>;
}

interface Reference {
  steps: number;
  x: number[][];
  y: number[][];
  initial: Record<string, number[] | number[][]>;
  cases: ReferenceCase[];
}

const reference = JSON.parse(readFileSync(new URL('../fixtures/optim/reference_trajectories.json', import.meta.url), 'utf8')) as Reference;
const NAMES = ['kernel1', 'bias1', 'kernel2', 'bias2'];

/** The reference MLP with its initial weights, and its variables by the reference's names. */
function referenceModel(): { model: tf.Sequential; variables: Map<string, tf.Variable> } {
  const model = tf.sequential({
    layers: [tf.layers.dense({ units: 8, inputShape: [4], activation: 'tanh' }), tf.layers.dense({ units: 3 })],
  });
  model.setWeights(NAMES.map((n) => tf.tensor(reference.initial[n]!)));
  const variables = new Map(model.trainableWeights.map((w, i) => [NAMES[i]!, variableOf(w)]));
  return { model, variables };
}

describe('optimizers follow the reference trajectories (50 steps, losses and weights within 1e-5 relative)', () => {
  const x = tf.tensor(reference.x);
  const y = tf.tensor(reference.y);
  for (const c of reference.cases) {
    it(`${c.optimizer}: ${c.name}`, async () => {
      const { model, variables } = referenceModel();
      const { paramGroups, ...rest } = c.options;
      const options = paramGroups ? { ...rest, paramGroups: paramGroups.map((g) => ({ ...g, params: g.params.map((n) => variables.get(n)!) })) } : rest;
      const Optimizer = optim[c.optimizer] as unknown as new (m: tf.LayersModel, o: unknown) => optim.Optimizer;
      const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new Optimizer(model, options) });
      const losses: number[] = [];
      for (let step = 0; step < reference.steps; step++) {
        const [out, loss] = await executor.run(x, y);
        losses.push(loss.dataSync()[0]!);
        tf.dispose([out as tf.Tensor, loss]);
      }
      expectClose(tf.tensor(losses), tf.tensor(c.losses), 1e-5, 0);
      executor.copyWeightsToHost();
      for (const name of NAMES) {
        // 1e-5 relative to the weight's magnitude: float32 noise (about 3e-7) on elements near zero is not a relative error of the weight.
        const expected = tf.tensor(c.final[name]!);
        expectClose(variables.get(name)!, expected, 1e-5, 1e-5 * tf.max(tf.abs(expected)).dataSync()[0]!);
      }
      executor.destroy();
    });
  }
});
