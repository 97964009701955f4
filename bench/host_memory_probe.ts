/**
 * One measurement of the host-memory benchmark, in a process of its own (a
 * wasm heap only grows, so its size at the end is the peak): compiles a model
 * with poptfjs at a host batch and micro-batch, trains it one step, and
 * prints, as one JSON line, the host memory poptfjs estimated for the step,
 * the peaks measured (the tensors' bytes, the wasm heap, the process's
 * resident memory) and the step's time.
 *
 * Run: node dist/bench/host_memory_probe.js <mobilenet-v2|resnet-50> <image size> <host batch> <micro-batch>
 */
import { hostHeap, hostMemoryPeak, Options, optim, resetHostMemoryPeak, tf, trainingModel } from 'poptfjs';
import { mobilenetV2 } from '../examples/models/mobilenet_v2.js';
import { resnet50 } from '../examples/models/resnet50.js';

/** The models the benchmark measures, by name: each ends in class probabilities. */
export const PROBE_MODELS: Readonly<Record<string, (imageSize: number) => tf.LayersModel>> = {
  'mobilenet-v2': (imageSize) => mobilenetV2({ imageSize, classes: 1000 }),
  'resnet-50': (imageSize) => {
    const logits = resnet50({ imageSize, classes: 1000 });
    return tf.model({ inputs: logits.inputs, outputs: tf.layers.softmax().apply(logits.outputs[0]!) as tf.SymbolicTensor, name: 'resnet50' });
  },
};

/** What one probe prints. */
export interface ProbeResult {
  /** The host memory poptfjs estimated for a step: its fullest heap (the main thread's), in bytes. */
  readonly estimated: number;
  /** The activations of that estimate, in bytes. */
  readonly estimatedActivations: number;
  /** The most bytes the tensors took at any kernel of the step ({@link hostMemoryPeak}: what the estimate models), in bytes. */
  readonly tensorsPeak: number;
  /** The wasm heap's size at the end (its peak), in bytes; undefined off wasm. */
  readonly heap: number | undefined;
  /** The process's peak resident memory, in bytes. */
  readonly maxRss: number;
  /** Wall time of the step, in ms. */
  readonly stepMs: number;
}

const isMain = process.argv[1]?.endsWith('host_memory_probe.js') || process.argv[1]?.endsWith('host_memory_probe.ts');
if (isMain) {
  const [name, size, host, micro] = process.argv.slice(2);
  const build = PROBE_MODELS[name ?? ''];
  const imageSize = Number(size);
  const hostBatch = Number(host);
  const microBatch = Number(micro);
  if (!build || !(imageSize > 0) || !(hostBatch > 0) || !(microBatch > 0) || hostBatch % microBatch !== 0) {
    console.error(`usage: host_memory_probe <${Object.keys(PROBE_MODELS).join('|')}> <image size> <host batch> <micro-batch dividing it>`);
    process.exit(2);
  }
  const model = build(imageSize);
  const options = new Options();
  options.Training.gradientAccumulation(hostBatch / microBatch);
  const executor = trainingModel(model, { options, loss: 'categoricalCrossentropy', optimizer: new optim.SGD(model, { lr: 0.01 }) });
  const x = tf.randomUniform([hostBatch, imageSize, imageSize, 3], -1, 1, 'float32', 1);
  const y = tf.oneHot(
    tf.tensor1d(
      Array.from({ length: hostBatch }, (_, i) => i % 1000),
      'int32',
    ),
    1000,
  );
  await executor.compile(x, y);
  resetHostMemoryPeak();
  const started = performance.now();
  const [out, loss] = await executor(x, y);
  loss.dataSync();
  const stepMs = performance.now() - started;
  tf.dispose([out as tf.Tensor, loss]);
  const estimate = executor.hostMemory()!;
  const result: ProbeResult = {
    estimated: estimate.mainThread,
    estimatedActivations: estimate.activations,
    tensorsPeak: hostMemoryPeak(),
    heap: hostHeap().size(),
    maxRss: process.resourceUsage().maxRSS * 1024,
    stepMs,
  };
  console.log(JSON.stringify(result));
}
