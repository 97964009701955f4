/**
 * Fine-tuning every layer of a MobileNetV2 (built as Keras builds it:
 * inverted residual blocks, depthwise convolutions, batch norm, ReLU6;
 * random weights, no download) at a host batch of 32, as micro-batches of 4:
 *
 * 1. on one IPU with gradient accumulation: the host holds one
 *    micro-batch's activations at a time, as the IPU does, so the host
 *    batch costs no more memory than the micro-batch. The loss of each
 *    micro-batch of the first step equals plain tfjs's training-mode forward
 *    pass over the same weights, computed chunk by chunk;
 * 2. pipelined over 4 IPUs, each computed on a worker thread with a tfjs
 *    backend (and a heap) of its own.
 *
 * Each part prints the host memory poptfjs estimated for a step and, on the
 * wasm backend, the heap's peak and the process's peak resident memory.
 *
 * Run: npx tsx examples/fine-tune-mobilenet.ts [--image-size 224] [--host-batch 32] [--micro-batch 4] [--steps 2] [--single-ipu]
 */
import { parseArgs } from 'node:util';
import { BeginBlock, hostHeap, Options, optim, tf, trainingModel, type HostMemoryEstimate } from 'poptfjs';
import { mobilenetV2 } from './models/mobilenet_v2.js';

const { values: args } = parseArgs({
  options: {
    'image-size': { type: 'string', default: '224' },
    'host-batch': { type: 'string', default: '32' },
    'micro-batch': { type: 'string', default: '4' },
    steps: { type: 'string', default: '2' },
    'single-ipu': { type: 'boolean', default: false },
  },
});
const imageSize = Number(args['image-size']);
const hostBatch = Number(args['host-batch']);
const microBatch = Number(args['micro-batch']);
const steps = Number(args.steps);
const accumulation = hostBatch / microBatch;
if (!Number.isInteger(accumulation)) throw new Error(`--host-batch ${hostBatch} is not a multiple of --micro-batch ${microBatch}`);

const CLASSES = 10;
/** Where the pipeline's stages begin: IPU 1 at block 3, IPU 2 at block 6, IPU 3 at block 13 (about a quarter of the work each). */
const STAGE_STARTS: ReadonlyArray<readonly [layer: string, ipu: number]> = [
  ['block_3_expand', 1],
  ['block_6_expand', 2],
  ['block_13_expand', 3],
];

const MiB = 2 ** 20;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;

/** The same MobileNetV2 every time (seeded initializers), with a 10-way classifier. */
function model(): tf.LayersModel {
  return mobilenetV2({ imageSize, classes: CLASSES, seed: 1 });
}

const images = tf.randomUniform([hostBatch, imageSize, imageSize, 3], -1, 1, 'float32', 7);
const labels = tf.oneHot(
  tf.tensor1d(
    Array.from({ length: hostBatch }, (_, i) => (i * 7) % CLASSES),
    'int32',
  ),
  CLASSES,
);

/** The loss of each micro-batch computed by plain tfjs: a training-mode forward pass per chunk of the host batch. */
function referenceLosses(net: tf.LayersModel): number[] {
  return Array.from({ length: accumulation }, (_, k) =>
    tf.tidy(() => {
      const x = images.slice([k * microBatch], [microBatch]);
      const y = labels.slice([k * microBatch], [microBatch]);
      const probabilities = net.apply(x, { training: true }) as tf.Tensor;
      return tf.mean(tf.metrics.categoricalCrossentropy(y, probabilities)).dataSync()[0]!;
    }),
  );
}

/** Trains a fresh model for `steps` steps; returns each micro-batch's loss of the first step and each step's mean loss. */
async function fineTune(options: Options, net: tf.LayersModel) {
  const reference = referenceLosses(net);
  const executor = trainingModel(net, { options, loss: 'categoricalCrossentropy', optimizer: new optim.SGD(net, { lr: 0.01, momentum: 0.9 }) });
  const stepLosses: number[] = [];
  let firstStep: number[] = [];
  for (let step = 0; step < steps; step++) {
    const [output, loss] = await executor(images, labels);
    const perMicroBatch = Array.from(loss.dataSync());
    if (step === 0) firstStep = perMicroBatch;
    stepLosses.push(perMicroBatch.reduce((a, b) => a + b, 0) / perMicroBatch.length);
    tf.dispose([output as tf.Tensor, loss]);
  }
  const estimate = executor.hostMemory();
  executor.destroy();
  net.dispose();
  return { reference, firstStep, stepLosses, estimate };
}

/** The largest relative difference between the losses and their reference. */
function largestRelativeDifference(losses: readonly number[], reference: readonly number[]): number {
  return Math.max(...losses.map((loss, i) => Math.abs(loss - reference[i]!) / Math.abs(reference[i]!)));
}

function describeEstimate(estimate: HostMemoryEstimate | undefined): string {
  if (!estimate) return 'no estimate';
  const workers = estimate.workers.map((w) => `IPU ${w.ipu} ${mib(w.total)}`).join(', ');
  return `main thread ${mib(estimate.mainThread)} (activations ${mib(estimate.activations)})${workers ? `; worker heaps: ${workers}` : ''}`;
}

/** The host memory this process has used at its peak so far. */
function measuredPeak(): string {
  const heap = hostHeap().size();
  return `${heap !== undefined ? `wasm heap ${mib(heap)}, ` : ''}peak resident memory ${mib(process.resourceUsage().maxRSS * 1024)}`;
}

function report(title: string, result: Awaited<ReturnType<typeof fineTune>>): boolean {
  const difference = largestRelativeDifference(result.firstStep, result.reference);
  console.log(`\n=== ${title} ===`);
  console.log(`first step, loss per micro-batch: ${result.firstStep.map((l) => l.toFixed(5)).join(' ')}`);
  console.log(`plain tfjs, chunk by chunk:       ${result.reference.map((l) => l.toFixed(5)).join(' ')}`);
  console.log(`largest relative difference: ${difference.toExponential(2)}`);
  console.log(`mean loss per step: ${result.stepLosses.map((l) => l.toFixed(5)).join(' ')}`);
  console.log(`host memory estimated: ${describeEstimate(result.estimate)}`);
  console.log(`host memory measured: ${measuredPeak()}`);
  return difference <= 1e-4;
}

console.log(`MobileNetV2 at ${imageSize}×${imageSize}, host batch ${hostBatch} as ${accumulation} micro-batches of ${microBatch}`);
const single = new Options().outputMode('All');
single.Training.gradientAccumulation(accumulation);
let exact = report('one IPU, gradient accumulation', await fineTune(single, model()));

if (!args['single-ipu']) {
  const pipelined = new Options().outputMode('All').parallelIpus(true);
  pipelined.Training.gradientAccumulation(accumulation);
  // BeginBlock marks where each stage starts; the layers after it in the model's layer list follow it there.
  const net = model();
  for (const [layer, ipu] of STAGE_STARTS) BeginBlock(net.getLayer(layer), { ipuId: ipu });
  exact = report('pipelined over 4 IPUs on worker threads', await fineTune(pipelined, net)) && exact;
}

if (!exact) {
  console.error('a micro-batch loss differs from plain tfjs by more than 1e-4 (relative)');
  process.exit(1);
}
