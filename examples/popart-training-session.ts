/**
 * Creating a TrainingSession with an NLL loss (the PopART guide's "Creating
 * a session" example): the Builder opens an ONNX classifier exported by
 * PyTorch, appends a negative log likelihood loss on new integer labels,
 * and a TrainingSession trains it with ConstSGD on a CPU device.
 *
 * PopART's nllloss takes probabilities, and the exported model gives
 * logits, so a softmax comes before the loss. The guide stops once the
 * session is created; here it also trains three steps of four batches on
 * one batch of data and prints the loss of each batch.
 *
 * The model is torchvision's SqueezeNet 1.1 with random weights (see
 * examples/popart-importing-graphs.ts).
 *
 * Run from the repository root: npx tsx examples/popart-training-session.ts [model.onnx]
 */
import { readFileSync } from 'node:fs';
import { onnx, popart } from 'poptfjs';

const modelPath = process.argv[2] ?? 'test/fixtures/onnx/torch/squeezenet.onnx';
const outputName = 'output';

// Append an Nll loss operation to the model.
const builder = new popart.Builder(modelPath);
const labels = builder.addInputTensor('INT32', [4]);
const probs = builder.aiOnnx.softmax([outputName], { axis: 1 });
const nlll = builder.aiGraphcore.nllloss([probs, labels]);

// Four batches (four weight updates) per run; return the output and the loss of each.
const anchors = { [outputName]: popart.AnchorReturnType('All'), [nlll]: popart.AnchorReturnType('All') };
const dataFlow = new popart.DataFlow(4, anchors);

const optimizer = new popart.ConstSGD(0.001);

// Run the session on the CPU.
const device = new popart.DeviceManager().createCpuDevice();
const session = await popart.TrainingSession.create({
  model: builder.getModelProto(),
  deviceInfo: device,
  dataFlow,
  loss: nlll,
  optimizer,
});
console.log(`training ${session.getTrainedWeightIds().length} weights of ${modelPath} with the loss '${nlll}'`);

await session.prepareDevice();
const arrays = session.initAnchorArrays();

// One batch of images (the input PyTorch was run on) and labels, repeated for each of the four batches.
const images = onnx.tensorFromProto(onnx.decodeTensorProto(readFileSync(modelPath.replace(/\.onnx$/, '_input_0.pb')))).data as Float32Array;
const inputName = builder.getInputTensorIds()[0]!;
const stepio = new popart.StepIO(
  {
    [inputName]: Float32Array.from({ length: 4 * images.length }, (_, i) => images[i % images.length]!),
    [labels]: Int32Array.from({ length: 16 }, (_, i) => i % 4),
  },
  arrays,
);
for (let step = 0; step < 3; step++) {
  session.run(stepio);
  console.log(`step ${step}: losses ${Array.from(arrays[nlll]!, (l) => l.toFixed(4)).join(' ')}`);
}
session.dispose();
