/**
 * The ONNX model a session or builder starts from, given as PopART takes it:
 * a file path, the bytes of a serialized `ModelProto`, or a `ModelProto`
 * (decoded, as `onnx.readModel(path).proto` gives it).
 */
import { PopartException } from '../common/errors.js';
import { modelFromBytes, readModel, type OnnxModel } from '../onnx/model_file.js';
import { decodeModelProto, encodeModelProto, type ModelProto } from '../onnx/proto/onnx_proto.js';

/** A model: its file's path, its bytes, or its `ModelProto`. */
export type ModelSource = string | Uint8Array | ModelProto;

/** The model `source` gives (a copy: changing it leaves the caller's `ModelProto` as it was); `where` names the caller in errors. */
export function modelFromSource(source: ModelSource, where: string): OnnxModel {
  if (typeof source === 'string') return readModel(source);
  if (source instanceof Uint8Array) return modelFromBytes(source);
  if (source !== null && typeof source === 'object' && 'graph' in source && source.graph) {
    return modelFromBytes(encodeModelProto(source));
  }
  throw new PopartException(`${where}: the model must be a file path, the bytes of an ONNX ModelProto, or a ModelProto with a graph`);
}

/** A deep copy of a model's proto. */
export function copyOfProto(proto: ModelProto): ModelProto {
  return decodeModelProto(encodeModelProto(proto));
}
