/**
 * `InferenceSession`: runs an ONNX model's forward pass on a device, as
 * PopART's (see {@link Session}).
 *
 * ```ts
 * const session = await InferenceSession.create({ model: 'model.onnx', dataFlow, deviceInfo: new DeviceManager().createCpuDevice() });
 * await session.prepareDevice();
 * const anchors = session.initAnchorArrays();
 * session.run(new StepIO({ input: data }, anchors));
 * ```
 */
import type { Optimizer } from '../../optim/optimizer.js';
import { Session } from './session.js';
import { sessionArguments, type PopartArguments, type SessionArguments } from './session_arguments.js';

/** A session that runs a model's forward pass. */
export class InferenceSession extends Session {
  /**
   * Imports the model and places it; compile and load it with
   * `prepareDevice()`. PopART's argument names are understood (`fnModel`,
   * `dataFeed`); any other unknown one is an error.
   */
  static async create(given: PopartArguments<SessionArguments>): Promise<InferenceSession> {
    const args = sessionArguments<SessionArguments>(given, 'InferenceSession.create');
    const setup = { args, kind: 'inference' as const };
    const imported = await Session.importFor(setup, 'InferenceSession.create');
    try {
      return new InferenceSession(setup, imported);
    } catch (error) {
      imported.dispose();
      throw error;
    }
  }

  protected override trainingOptimizer(): Optimizer | undefined {
    return undefined;
  }
}
