/**
 * One report of each kind, made as a user makes them: a training pipeline
 * over four IPUs, a small model on one IPU, a plan of a model that is never
 * computed, and a PopART session on an imported ONNX model. The report tests
 * render each in Chromium; `scripts/report_screenshots.ts` pictures them for
 * docs/.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BeginBlock, Options, plan, popart, tf, trainingModel, inferenceModel, writeProfileReports, type ProfileReportFiles } from 'poptfjs';

/** A report of the gallery: how to make it, and the height of its picture. */
export interface GalleryReport {
  /** The picture's name: docs/images/report-<name>.png. */
  readonly name: string;
  /** What the report shows, as the docs caption it. */
  readonly caption: string;
  /** Height of the screenshot, pixels (1200 wide). */
  readonly height: number;
  /** Makes the report in `directory`. */
  write(directory: string): Promise<ProfileReportFiles>;
}

function dense(units: number, name: string, inputShape?: number[]) {
  return tf.layers.dense({ units, name, activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: units }), ...(inputShape ? { inputShape } : {}) });
}

/** The files a session wrote into `directory` (named after its graph). */
function writtenFiles(directory: string): ProfileReportFiles {
  const html = readdirSync(directory).find((f) => f.endsWith('.html'))!;
  const base = join(directory, html.slice(0, -'.html'.length));
  return { html: `${base}.html`, json: `${base}.json`, trace: `${base}.trace.json` };
}

/** The reports of the gallery. */
export const REPORT_GALLERY: readonly GalleryReport[] = [
  {
    name: 'pipeline',
    caption: 'A 4-layer MLP trained as a pipeline over four IPUs (gradient accumulation 8)',
    height: 1300,
    async write(directory) {
      const model = tf.sequential({ layers: [dense(256, 'input_layer', [128]), dense(256, 'hidden_1'), dense(256, 'hidden_2'), dense(10, 'logits')] });
      model.layers.forEach((layer, ipu) => BeginBlock(layer, { userId: `block_${ipu}`, ipuId: ipu }));
      const options = new Options();
      options.Training.gradientAccumulation(8);
      const training = trainingModel(model, { options, loss: 'mse' });
      await training.compile(tf.zeros([64, 128]), tf.zeros([64, 10]));
      const files = writeProfileReports(directory, training.executable);
      training.destroy();
      return files;
    },
  },
  {
    name: 'one-ipu',
    caption: 'A small CNN for inference on one IPU: no pipeline, and memory bars on the scale of the fullest IPU',
    height: 850,
    async write(directory) {
      const model = tf.sequential({
        layers: [
          tf.layers.conv2d({ filters: 8, kernelSize: 3, activation: 'relu', inputShape: [28, 28, 1], name: 'conv' }),
          tf.layers.maxPooling2d({ poolSize: 2, name: 'pool' }),
          tf.layers.flatten({ name: 'flatten' }),
          tf.layers.dense({ units: 10, name: 'logits' }),
        ],
      });
      const inference = inferenceModel(model, { options: new Options().deviceIterations(4) });
      await inference.compile(tf.zeros([16, 28, 28, 1]));
      const files = writeProfileReports(directory, inference.executable);
      inference.destroy();
      return files;
    },
  },
  {
    name: 'plan',
    caption: 'plan(): a CNN planned for training over two IPUs without computing it',
    height: 1250,
    async write(directory) {
      const options = new Options();
      options.Training.gradientAccumulation(6);
      const planned = await plan(
        () => {
          const conv = (filters: number, name: string, inputShape?: number[]) =>
            tf.layers.conv2d({ filters, kernelSize: 3, padding: 'same', activation: 'relu', name, ...(inputShape ? { inputShape } : {}) });
          const layers = [
            conv(32, 'conv_1', [64, 64, 3]),
            conv(32, 'conv_2'),
            tf.layers.maxPooling2d({ poolSize: 2, name: 'pool_1' }),
            conv(64, 'conv_3'),
            conv(64, 'conv_4'),
            tf.layers.maxPooling2d({ poolSize: 2, name: 'pool_2' }),
            tf.layers.flatten({ name: 'flatten' }),
            tf.layers.dense({ units: 100, name: 'logits' }),
          ];
          const model = tf.sequential({ layers });
          BeginBlock(layers[0]!, { userId: 'features', ipuId: 0 });
          BeginBlock(layers[3]!, { userId: 'deeper', ipuId: 1 });
          return model;
        },
        { options, loss: 'categoricalCrossentropy', optimizer: 'adam', inputs: [{ shape: [16, 64, 64, 3] }], target: { shape: [16, 100] } },
      );
      return writeProfileReports(directory, planned.executable);
    },
  },
  {
    name: 'session',
    caption: "A PopART InferenceSession on torchvision's SqueezeNet 1.1, imported from ONNX",
    height: 1700,
    async write(directory) {
      const options = new popart.SessionOptions();
      options.engineOptions = { 'autoReport.all': 'true', 'autoReport.directory': directory };
      const session = await popart.InferenceSession.create({
        model: 'test/fixtures/onnx/torch/squeezenet.onnx',
        dataFlow: new popart.DataFlow(1, { output: popart.AnchorReturnType('All') }),
        deviceInfo: new popart.DeviceManager().createIpuModelDevice(),
        userOptions: options,
      });
      await session.prepareDevice();
      session.dispose();
      return writtenFiles(directory);
    },
  },
];
