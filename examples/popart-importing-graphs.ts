/**
 * Importing a graph for inference (the PopART guide's "Importing graphs"
 * example): an ONNX model exported by PyTorch becomes an InferenceSession
 * whose DataFlow fetches the model's output, on a CPU device.
 *
 * The guide exports a pretrained AlexNet; here the model is torchvision's
 * SqueezeNet 1.1 (AlexNet-like: convolutions, ReLUs, max pools and
 * concatenations, 10 classes, random weights) on 4 x 3 x 64 x 64 images,
 * exported the same way by `scripts/make_onnx_fixtures.py`
 * (`torch.onnx.export(model, input_, path, output_names=['output'])`).
 *
 * Run from the repository root: npx tsx examples/popart-importing-graphs.ts [model.onnx]
 */
import { popart } from 'poptfjs';

const modelPath = process.argv[2] ?? 'test/fixtures/onnx/torch/squeezenet.onnx';
const outputName = 'output';

// Create a runtime environment: 100 batches per run, every batch's output returned.
const anchors = { [outputName]: popart.AnchorReturnType('All') };
const dataFlow = new popart.DataFlow(100, anchors);
const device = new popart.DeviceManager().createCpuDevice();

const session = await popart.InferenceSession.create({ model: modelPath, dataFlow, deviceInfo: device });

const [inputName] = new popart.Builder(modelPath).getInputTensorIds();
const input = session.getInfo(inputName!);
console.log(`imported ${modelPath}: ${session.getAllTensorIds().length} tensors`);
console.log(`input '${inputName}': ${input.dataType} [${input.shape.join(', ')}] per batch`);
console.log(`anchor '${outputName}': [${session.getInfo(outputName).shape.join(', ')}] per batch, [${session.anchorArrayShape(outputName).join(', ')}] per run`);
session.dispose();
