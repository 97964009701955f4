import { afterEach, describe, expect, it, vi } from 'vitest';
import * as poptfjs from 'poptfjs';
import { configureLoggingFromEnv } from '../../lib/common/log.js';

const { popart } = poptfjs;

afterEach(() => configureLoggingFromEnv({}));

describe("PopART's error hierarchy", () => {
  it('builds PopART and Poplar errors on poptfjs errors, the runtime faults included', () => {
    const parents: Array<[new (message: string) => Error, new (message: string) => Error]> = [
      [popart.popart_internal_exception, popart.popart_exception],
      [popart.popart_runtime_error, popart.popart_exception],
      [popart.poplar_runtime_error, popart.poplar_exception],
      [popart.poplar_application_runtime_error, popart.poplar_runtime_error],
      [popart.poplar_system_runtime_error, popart.poplar_runtime_error],
      [popart.poplar_unknown_runtime_error, popart.poplar_system_runtime_error],
      [popart.poplar_unrecoverable_runtime_error, popart.poplar_system_runtime_error],
    ];
    for (const [child, parent] of parents) {
      const error = new child('boom');
      expect(error).toBeInstanceOf(parent);
      expect(error).toBeInstanceOf(poptfjs.Error);
    }
    for (const standalone of [popart.poplibs_exception, popart.poplar_exception]) expect(new standalone('x')).not.toBeInstanceOf(popart.popart_exception);
    const recoverable = new popart.poplar_recoverable_runtime_error('link down', popart.RecoveryAction.LINK_RESET);
    expect(recoverable).toBeInstanceOf(poptfjs.RecoverableError);
    expect(recoverable).toBeInstanceOf(popart.poplar_system_runtime_error);
    expect([recoverable.recoveryAction, recoverable.type]).toEqual(['LINK_RESET', 'poplar_recoverable_runtime_error']);
    expect(String(new popart.popart_exception('bad input'))).toBe('PopartException [popart_exception]: bad input');
    expect(new poptfjs.onnx.OnnxError('bad model')).toBeInstanceOf(popart.popart_exception);
  });
});

describe('logging', () => {
  it("honours POPART_LOG_LEVEL for PopART's modules; POPTFJS_LOG_LEVEL wins when both are set", () => {
    configureLoggingFromEnv({ POPART_LOG_LEVEL: 'DEBUG' });
    expect(popart.getLogger('session').getLevel()).toBe('DEBUG');
    configureLoggingFromEnv({ POPART_LOG_LEVEL: 'DEBUG', POPTFJS_LOG_LEVEL: 'ERR' });
    expect(popart.getLogger('devicex').getLevel()).toBe('ERR');
    expect(() => configureLoggingFromEnv({ POPART_LOG_LEVEL: 'LOUD' })).toThrow(/POPART_LOG_LEVEL: unknown log level 'LOUD'/);
  });

  it('logs sessions in the session, ir, devicex, builder and ces modules', async () => {
    configureLoggingFromEnv({ POPART_LOG_LEVEL: 'TRACE' });
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const builder = new popart.Builder();
      const x = builder.addInputTensor('FLOAT', [2]);
      const y = builder.aiOnnx.relu([x]);
      const session = await popart.InferenceSession.create({
        model: builder.getModelProto(),
        dataFlow: new popart.DataFlow(1, { [y]: popart.AnchorReturnType('All') }),
        deviceInfo: new popart.DeviceManager().createCpuDevice(),
      });
      await session.prepareDevice();
      session.weightsFromHost();
      session.run(new popart.StepIO({ [x]: new Float32Array(2) }, session.initAnchorArrays()));
      session.dispose();
    } finally {
      spy.mockRestore();
    }
    const modules = new Set(lines.map((line) => /poptfjs:(\w+) /.exec(line)?.[1]));
    for (const module of ['session', 'ir', 'devicex', 'builder', 'ces']) expect(modules).toContain(module);
  });
});
