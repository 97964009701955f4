/**
 * Selecting a device for execution (the PopART guide's example): the
 * DeviceManager creates a CPU device and an IPU Model, enumerates the
 * simulated IPU system's devices, acquires a pair of IPUs, the device with
 * id 5 and, on demand, four IPUs; the same imported model runs on each.
 *
 * The model is torchvision's SqueezeNet 1.1 with random weights (see
 * examples/popart-importing-graphs.ts).
 *
 * Run from the repository root: npx tsx examples/popart-device-selection.ts [model.onnx]
 */
import { popart } from 'poptfjs';

const modelPath = process.argv[2] ?? 'test/fixtures/onnx/torch/squeezenet.onnx';
const dataFlow = new popart.DataFlow(1, { output: popart.AnchorReturnType('All') });
const manager = new popart.DeviceManager();

const devices = manager.enumerateDevices();
console.log(`the system has ${devices.length} devices: ${devices.filter((d) => d.numIpus === 1).length} single IPUs, then groups of 2 to ${manager.numIpus}`);

const choices: Array<[string, () => popart.Device]> = [
  ['createCpuDevice()', () => manager.createCpuDevice()],
  ['createIpuModelDevice()', () => manager.createIpuModelDevice()],
  // Acquire a two-IPU pair.
  ['acquireAvailableDevice(2)', () => manager.acquireAvailableDevice(2)],
  // Acquire IPU configuration 5.
  ['acquireDeviceById(5)', () => manager.acquireDeviceById(5)],
  // Acquire four IPUs on demand.
  ['acquireAvailableDevice(4, OnDemand)', () => manager.acquireAvailableDevice(4, { connectionType: popart.DeviceConnectionType.OnDemand })],
];

const input = Float32Array.from({ length: 4 * 3 * 64 * 64 }, (_, i) => Math.sin(i));
for (const [how, acquire] of choices) {
  const device = acquire();
  const session = await popart.InferenceSession.create({ model: modelPath, dataFlow, deviceInfo: device });
  await session.prepareDevice();
  const attachedBefore = device.isAttached;
  const stepio = new popart.StepIO({ 'input.1': input }, session.initAnchorArrays());
  session.run(stepio);
  const first = Array.from(stepio.outputs.get('output')!.subarray(0, 3), (v) => v.toFixed(5)).join(' ');
  console.log(
    `${how}: ${device.kind} device ${device.id} of ${device.numIpus} IPU(s) [${device.ipus.join(', ')}], ` +
      `attached ${attachedBefore ? 'when acquired' : 'on the first run'}; output ${first} ...`,
  );
  session.dispose();
}
