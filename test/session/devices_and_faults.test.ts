import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { popart, PoptfjsError } from 'poptfjs';
import { expectAllClose, linearModel, ramp } from './session_models.js';

const { AnchorReturnType, DataFlow, DeviceManager, InferenceSession, SessionOptions, StepIO } = popart;

async function linearSession(deviceInfo: popart.Device, userOptions = new SessionOptions()) {
  const m = linearModel();
  const session = await InferenceSession.create({
    model: m.builder.getModelProto(),
    dataFlow: new DataFlow(1, { [m.out]: AnchorReturnType('All') }),
    deviceInfo,
    userOptions,
  });
  await session.prepareDevice();
  const expected = tf.add(tf.matMul(tf.tensor(ramp(6), [2, 3]), tf.tensor(m.W, [3, 2])), tf.tensor(m.B)).dataSync();
  return { m, session, stepio: new StepIO({ [m.x]: ramp(6) }, session.initAnchorArrays()), expected };
}

describe('devices', () => {
  it('runs on the CPU, the IPU Model and acquired IPUs, attaching an OnDemand device when it first runs', async () => {
    const manager = new DeviceManager();
    const devices = [
      manager.createCpuDevice(),
      manager.createIpuModelDevice({ numIpus: 2 }),
      manager.acquireAvailableDevice(2),
      manager.acquireAvailableDevice(1, { connectionType: popart.DeviceConnectionType.OnDemand }),
    ];
    expect(devices[2]!.isAttached).toBe(true);
    for (const device of devices) {
      const { m, session, stepio, expected } = await linearSession(device);
      if (device.connectionType === 'OnDemand') expect(device.isAttached).toBe(false);
      session.run(stepio);
      expect(device.isAttached).toBe(true);
      expectAllClose(stepio.outputs.get(m.out)!, expected);
      session.dispose();
      expect(device.isAttached).toBe(false);
    }
    const byId = manager.acquireDeviceById(manager.enumerateDevices().find((d) => d.numIpus === 2 && d.heldBy.length === 0)!.id);
    expect(byId.numIpus).toBe(2);
    byId.detach();
  });

  it('refuses a device with too few IPUs for the placement, and a detached device', async () => {
    const options = new SessionOptions();
    options.enableReplicatedGraphs = true;
    options.replicatedGraphCount = 2;
    await expect(linearSession(new DeviceManager().createIpuModelDevice({ numIpus: 1 }), options)).rejects.toThrow(/the model needs 2 IPU\(s\) but device -1 has 1/);
    const device = new DeviceManager().createIpuModelDevice();
    const { session, stepio } = await linearSession(device);
    device.detach();
    expect(() => session.run(stepio)).toThrow(/device -1 is detached; attach it \(deviceInfo.attach\(\)\) first/);
    session.dispose();
  });

  it('compiles without loading with prepareDevice(false), and loads with loadEngineAndConnectStreams()', async () => {
    const m = linearModel();
    const session = await InferenceSession.create({
      model: m.builder.getModelProto(),
      dataFlow: new DataFlow(1, { [m.out]: AnchorReturnType('All') }),
      deviceInfo: new DeviceManager().createCpuDevice(),
    });
    const stepio = new StepIO({ [m.x]: ramp(6) }, session.initAnchorArrays());
    expect(() => session.run(stepio)).toThrow(/run: the device is not prepared; call prepareDevice\(\) first/);
    await session.prepareDevice(false);
    expect(session.getSummaryReport()).toMatch(/^Model 'inference' compiled for inference/);
    expect(() => session.weightsFromHost()).toThrow(/weightsFromHost: the device is not prepared/);
    session.loadEngineAndConnectStreams();
    session.run(stepio);
    session.dispose();
    expect(() => session.run(stepio)).toThrow(/run: the session was disposed/);
  });
});

describe('device faults during a run', () => {
  it('throws poplar_recoverable_runtime_error with its recovery action, then asks for the recovery and the weights', async () => {
    const device = new DeviceManager().createIpuModelDevice();
    const { m, session, stepio, expected } = await linearSession(device);
    const [location] = device.getSimulatedErrorLocations('F0');
    device.insertSimulatedError(popart.SimulatedErrorCode.IPU_RESET, location!);
    let caught: unknown;
    try {
      session.run(stepio);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(popart.poplar_recoverable_runtime_error);
    expect(caught).toBeInstanceOf(popart.poplar_system_runtime_error);
    expect(caught).toBeInstanceOf(popart.poplar_exception);
    expect(caught).toBeInstanceOf(PoptfjsError);
    expect(caught).not.toBeInstanceOf(popart.popart_exception);
    expect((caught as popart.poplar_recoverable_runtime_error).recoveryAction).toBe(popart.RecoveryAction.IPU_RESET);

    expect(() => session.run(stepio)).toThrow(popart.popart_runtime_error);
    expect(() => session.run(stepio)).toThrow(/device -1 needs IPU_RESET after a fault: detach and attach it/);
    device.detach();
    device.attach();
    expect(() => session.run(stepio)).toThrow(/the device lost its weights in a fault; call weightsFromHost\(\)/);
    expect(() => session.weightsToHost()).toThrow(/lost its weights/);
    session.weightsFromHost();
    session.run(stepio);
    expectAllClose(stepio.outputs.get(m.out)!, expected);
    session.dispose();
  });

  it('names a power cycle POWER_CYCLE, and keeps an unrecoverable fault', async () => {
    const device = new DeviceManager().createIpuModelDevice();
    const { session, stepio } = await linearSession(device);
    const [location] = device.getSimulatedErrorLocations('_FusedMatMul');
    device.insertSimulatedError(popart.SimulatedErrorCode.FULL_RESET, location!);
    expect(() => session.run(stepio)).toThrow(expect.objectContaining({ recoveryAction: popart.RecoveryAction.POWER_CYCLE }));
    device.detach();
    device.attach();
    session.weightsFromHost();
    device.insertSimulatedError(popart.SimulatedErrorCode.MEMORY_ERROR, location!);
    expect(() => session.run(stepio)).toThrow(popart.poplar_unrecoverable_runtime_error);
    expect(() => session.run(stepio)).toThrow(/had an unrecoverable fault \(MEMORY_ERROR\)/);
    session.dispose();
  });
});
