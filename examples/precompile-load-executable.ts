/**
 * Precompilation without the model (PopTorch's `export_model=False`
 * example): export only the executable, then re-create and wrap the model
 * yourself and attach the executable to it with `loadExecutable`, which
 * checks that the model matches the executable (its traced signature and
 * parameter shapes) and takes the weights from the model.
 *
 * Run: npx tsx examples/precompile-load-executable.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Options, tf, trainingModel } from 'poptfjs';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-'));
const filename = join(dir, 'executable.poptfjs');

function exampleModel(): tf.LayersModel {
  return tf.sequential({ layers: [tf.layers.dense({ units: 10, inputShape: [10], kernelInitializer: tf.initializers.glorotUniform({ seed: 0 }) })] });
}

const input = tf.randomNormal([1, 10], 0, 1, 'float32', 1);
const target = tf.randomNormal([1, 10], 0, 1, 'float32', 2);

// On the compile machine: export the executable only.
{
  const opts = new Options().useOfflineIpuTarget(2);
  const poptfjsModel = trainingModel(exampleModel(), { options: opts, loss: 'meanSquaredError' });
  await poptfjsModel.compileAndExport(filename, input, target, { exportModel: false });
  poptfjsModel.destroy();
}

// On the target machine: re-create the model, wrap it, and load the executable.
const model = exampleModel();
const opts = new Options();
const poptfjsModel = trainingModel(model, { options: opts, loss: 'meanSquaredError' });
await poptfjsModel.loadExecutable(filename);

const [, loss] = (await poptfjsModel(input, target)) as [tf.Tensor, tf.Tensor]; // Run on IPU
console.log(`loaded the executable without compiling (compiled ${poptfjsModel.compileCount} time(s)); loss ${loss.dataSync()[0]!.toFixed(6)}`);

// A model that does not match the executable is refused, naming the first difference.
const other = trainingModel(tf.sequential({ layers: [tf.layers.dense({ units: 10, inputShape: [10], useBias: false })] }), { loss: 'meanSquaredError' });
try {
  await other.loadExecutable(filename);
} catch (error) {
  console.log(`a different model is refused: ${(error as Error).message}`);
}
rmSync(dir, { recursive: true, force: true });
