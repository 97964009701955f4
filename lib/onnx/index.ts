/**
 * ONNX support: read `ModelProto`s (files, bytes, external data), import them
 * into the poptfjs IR, run them, and write them back with current weights.
 *
 * ```ts
 * const model = readModel('resnet.onnx');
 * const imported = importModel(model, { inputShapeInfo: { input: [1, 3, 224, 224] } });
 * const outputs = runImportedModel(imported, { input: tf.zeros([1, 3, 224, 224]) });
 * writeModel('resnet-trained.onnx', imported);
 * ```
 */
export { readModel, modelFromBytes, type OnnxModel, type ReadModelOptions } from './model_file.js';
export { importModel, type ImportOptions, type ImportedModel, type NamedValues } from './model_import.js';
export type { TensorInfo } from './graph_evaluation.js';
export { runImportedModel } from './imported_model_run.js';
export {
  modelToBytes,
  writeModel,
  modelWithWeights,
  importedWeights,
  type WeightValues,
  type ModelToBytesOptions,
  type WriteModelOptions,
  type ExternalDataOptions,
} from './model_export.js';
export { checkModelSupported } from './model_support.js';
export { supportedOperatorTypes } from './operators/registry.js';
export { OnnxError, OnnxUnsupportedError, OnnxConstantInputError, type UnsupportedFeature } from './proto/onnx_errors.js';
export { OnnxElementType, elementTypeName } from './proto/onnx_element_type.js';
export type { HostTensor, HostTensorData } from './proto/host_tensor.js';
export { decodeTensorProto, type ModelProto, type TensorProto } from './proto/onnx_proto.js';
export { tensorFromProto } from './proto/tensor_proto_data.js';
