/**
 * Precompilation, step 2 (PopTorch's `poptorch.load` example): restore the
 * model, the poptfjs wrapper and the executable from the file written by
 * examples/precompile-export.ts, and train without compiling. The model
 * (`executor.model`) is rebuilt from the file; the weights trained on the
 * device are copied back into it.
 *
 * Run: npx tsx examples/precompile-load.ts [file]   (default: precompiled.poptfjs in the temp directory)
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, tf } from 'poptfjs';

const filename = process.argv[2] ?? join(tmpdir(), 'precompiled.poptfjs');

const poptfjsModel = await load(filename);

// That's all: your model is ready to be used.
const input = tf.randomNormal([1, 10], 0, 1, 'float32', 1);
const target = tf.randomNormal([1, 10], 0, 1, 'float32', 2);
for (let step = 0; step < 50; step++) {
  const [output, loss] = (await poptfjsModel(input, target)) as [tf.Tensor, tf.Tensor];
  if (step % 10 === 0 || step === 49) console.log(`${step}: loss ${loss.dataSync()[0]!.toFixed(6)}`);
  tf.dispose([output, loss]);
}
console.log(`compiled ${poptfjsModel.compileCount} time(s) in this process`);

// The restored host model receives the trained weights.
poptfjsModel.copyWeightsToHost();
const model = poptfjsModel.model as tf.LayersModel;
const hostLoss = tf.losses.meanSquaredError(target, model.predict(input) as tf.Tensor).dataSync()[0]!;
console.log(`the restored model '${model.name}' has ${model.weights.length} weights; its own loss on the sample is ${hostLoss.toFixed(6)}`);
