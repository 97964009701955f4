/**
 * A subclass of a built-in optimizer is warned about when a model trains
 * with it, as PopTorch's tests/optimizers_test.py (test_optimizer_warnings)
 * expects for every optimizer, subclassed or not.
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { optim, trainingModel } from 'poptfjs';

afterEach(() => vi.restoreAllMocks());

const OPTIMIZERS = { SGD: optim.SGD, Adam: optim.Adam, AdamW: optim.AdamW, RMSprop: optim.RMSprop, LAMB: optim.LAMB } as const;

describe('subclassed optimizers', () => {
  for (const [name, Built] of Object.entries(OPTIMIZERS)) {
    for (const subclassed of [true, false]) {
      it(`${name}${subclassed ? ' subclassed' : ''}: ${subclassed ? 'a warning' : 'no warning'} when a model is wrapped with it and when it is set again`, async () => {
        const Base = Built as unknown as typeof optim.SGD;
        class SubclassedOpt extends Base {}
        const Opt = subclassed ? SubclassedOpt : Base;
        const lines: string[] = [];
        vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
        const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3] })] });
        const opt = new Opt(model, { lr: 0.01 });
        const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
        tf.dispose(await executor.run(tf.ones([2, 3]), tf.ones([2, 2])));
        executor.setOptimizer(opt);
        vi.restoreAllMocks();
        const warnings = lines.filter((l) => l.includes('is unlikely to behave as intended'));
        if (subclassed) {
          expect(warnings).toHaveLength(1);
          expect(warnings[0]).toContain(
            `W: Optimizer \`SubclassedOpt\` subclassed from optim.${name} is unlikely to behave as intended: poptfjs knows it as an optim.${name} (its attributes, state dict and exported executables are those of optim.${name}) and runs only the update it overrides, never other methods it adds`,
          );
        } else {
          expect(warnings).toEqual([]);
        }
        executor.destroy();
      });
    }
  }
});
