/**
 * Precompilation, step 1 (PopTorch's compileAndExport example): compile a
 * training model for an offline IPU target, without a device, and export the
 * executable with the model and its weights to a file.
 *
 * The model is PopTorch's `ExampleModelWithLoss`: a Linear(10, 10) layer
 * trained with an MSE loss (here passed to `trainingModel`).
 *
 * Run: npx tsx examples/precompile-export.ts [file]   (default: precompiled.poptfjs in the temp directory)
 * Then: npx tsx examples/precompile-load.ts [file]
 */
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Options, tf, trainingModel } from 'poptfjs';

const filename = process.argv[2] ?? join(tmpdir(), 'precompiled.poptfjs');

const model = tf.sequential({ layers: [tf.layers.dense({ units: 10, inputShape: [10], kernelInitializer: tf.initializers.glorotUniform({ seed: 0 }) })] });

const opts = new Options();
// You don't need a real IPU to compile the executable.
opts.useOfflineIpuTarget(2);

// Wrap the model in the poptfjs training wrapper.
const poptfjsModel = trainingModel(model, { options: opts, loss: 'meanSquaredError' });

// Some dummy inputs (one sample).
const input = tf.randomNormal([1, 10], 0, 1, 'float32', 1);
const target = tf.randomNormal([1, 10], 0, 1, 'float32', 2);

await poptfjsModel.compileAndExport(filename, input, target);
console.log(`exported the training executable of '${model.name}' with its model to ${filename} (${statSync(filename).size} bytes)`);
