/**
 * Importing a session's ONNX model into the IR: the arguments and options
 * are checked first, then the model is read and imported with the data
 * flow's anchors as extra outputs and, for training, its loss and gradients.
 */
import { initBackend } from '../backend/backend_selection.js';
import { getLogger } from '../common/log.js';
import { importModel, type ImportedModel } from '../onnx/model_import.js';
import { checkedArgument } from './checked_argument.js';
import { modelFromSource } from './model_source.js';
import { sessionArgumentsSchema, type SessionSetup } from './session_arguments.js';
import { sessionEngineSettings, sessionSettings, type SessionOptions } from './session_options.js';

const irLog = getLogger('ir');
const cesLog = getLogger('ces');

/** Imports the model of `setup` (after checking the arguments); `where` names the caller in errors. */
export async function importSessionModel(setup: SessionSetup, where: string): Promise<ImportedModel> {
  const args = setup.args;
  checkedArgument(sessionArgumentsSchema, args, where);
  // The options are checked before the (possibly long) import; the session checks them again when constructed.
  sessionEngineSettings(sessionSettings(args.userOptions as SessionOptions | undefined));
  await initBackend();
  const model = modelFromSource(args.model, where);
  const imported = importModel(model, {
    ...(args.inputShapeInfo ? { inputShapeInfo: args.inputShapeInfo } : {}),
    outputs: args.dataFlow.anchors(),
    ...(setup.loss !== undefined ? { training: { loss: setup.loss } } : {}),
  });
  irLog.info(
    () =>
      `imported '${model.proto.graph?.name ?? ''}': ${model.proto.graph!.node.length} ONNX nodes into ${imported.graph.nodes.length} IR nodes, ` +
      `${imported.variables.size} weights${setup.loss !== undefined ? `, ${Object.keys(imported.graph.roles.gradients ?? {}).length} trained` : ''}`,
  );
  cesLog.debug(() => `${imported.tensorInfo.size - imported.tensorValues.size} tensor(s) are constant expressions, computed at import`);
  return imported;
}
