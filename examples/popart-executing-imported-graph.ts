/**
 * Executing an imported graph (the PopART guide's example): read the ONNX
 * model to find its input and output names, create an InferenceSession,
 * prepare the device, and run it with a StepIO holding the input keyed by
 * its name in the graph (`input.1`, the name PyTorch gave it).
 *
 * The model is torchvision's SqueezeNet 1.1 with random weights (see
 * examples/popart-importing-graphs.ts); the input is the one PyTorch was run
 * on when the model was exported, so the output can be compared with
 * PyTorch's.
 *
 * Run from the repository root: npx tsx examples/popart-executing-imported-graph.ts [model.onnx]
 */
import { readFileSync } from 'node:fs';
import { onnx, popart } from 'poptfjs';

const modelPath = process.argv[2] ?? 'test/fixtures/onnx/torch/squeezenet.onnx';
const outputName = 'output';

// Obtain the input and output names of the model.
const loadedModel = onnx.readModel(modelPath);
const inputsName = loadedModel.proto.graph!.input.map((node) => node.name);
const outputsName = loadedModel.proto.graph!.output.map((node) => node.name);
console.log('Inputs name:', inputsName);
console.log('Outputs name:', outputsName);

// Create a runtime environment.
const anchors = { [outputName]: popart.AnchorReturnType('All') };
const dataFlow = new popart.DataFlow(1, anchors);
const device = new popart.DeviceManager().createCpuDevice();

const session = await popart.InferenceSession.create({ model: modelPath, dataFlow, deviceInfo: device });
await session.prepareDevice();

const tensor = (file: string) => onnx.tensorFromProto(onnx.decodeTensorProto(readFileSync(modelPath.replace(/\.onnx$/, file)))).data as Float32Array;
const input1 = tensor('_input_0.pb');

const stepio = new popart.StepIO({ 'input.1': input1 }, session.initAnchorArrays());
session.run(stepio);

const output = stepio.outputs.get(outputName) as Float32Array;
const pytorch = tensor('_output_0.pb');
const difference = output.reduce((max, v, i) => Math.max(max, Math.abs(v - pytorch[i]!)), 0);
console.log(`output [${session.anchorArrayShape(outputName).join(', ')}], largest difference from PyTorch's output: ${difference.toExponential(2)}`);
session.dispose();
