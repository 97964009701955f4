/**
 * A session's host weights (its copy of the model's initializers, as
 * PopART's): read into and written from buffers by name (`WeightsIO`), and
 * reset from the initializers of an ONNX model file.
 */
import * as tf from '@tensorflow/tfjs';
import { PopartException } from '../common/errors.js';
import { readModel } from '../onnx/model_file.js';
import type { ImportedModel } from '../onnx/model_import.js';
import { hostTensorToTf } from '../onnx/proto/host_tensor.js';
import { OnnxElementType } from '../onnx/proto/onnx_element_type.js';
import { tensorFromProto } from '../onnx/proto/tensor_proto_data.js';
import { roundFloat16Array } from '../precision/float16.js';
import { checkBuffer } from './step_buffers.js';
import type { HostArray, HostArrays } from './step_io.js';

/** Weight buffers keyed by weight (initializer) name, for `readWeights` / `writeWeights` (PopART's `WeightsIO`). */
export type WeightsIO = HostArrays;

/** The host weight of the initializer `name`; an error listing the weights otherwise. */
function hostWeight(imported: ImportedModel, name: string, what: string): tf.Variable {
  const param = imported.parameterNames.get(name);
  if (param === undefined) {
    throw new PopartException(`${what}: the session has no weight '${name}'; its weights are ${[...imported.parameterNames.keys()].map((n) => `'${n}'`).join(', ')}`);
  }
  return imported.variables.get(param)!;
}

function weightBuffers(imported: ImportedModel, weights: WeightsIO, what: string): Array<[string, tf.Variable, HostArray]> {
  const entries = weights instanceof Map ? [...weights] : Object.entries(weights as Record<string, HostArray>);
  return entries.map(([name, buffer]) => {
    const variable = hostWeight(imported, name, what);
    checkBuffer(buffer, variable.dtype, variable.size, true, `${what}: buffer of weight '${name}'`, variable.shape);
    return [name, variable, buffer];
  });
}

/** Copies the host weights named in `weights` into their buffers. */
export function readHostWeights(imported: ImportedModel, weights: WeightsIO): void {
  for (const [, variable, buffer] of weightBuffers(imported, weights, 'readWeights')) buffer.set(variable.dataSync() as HostArray);
}

/** Sets the host weights named in `weights` from their buffers, FLOAT16 weights rounded to float16. */
export function writeHostWeights(imported: ImportedModel, weights: WeightsIO): void {
  for (const [name, variable, buffer] of weightBuffers(imported, weights, 'writeWeights')) {
    const half = imported.tensorInfo.get(name)?.elementType === OnnxElementType.FLOAT16;
    const value = tf.tensor(half ? roundFloat16Array(buffer as Float32Array) : buffer, variable.shape, variable.dtype);
    variable.assign(value);
    value.dispose();
  }
}

/**
 * Sets the host weights from the initializers of the ONNX model `path`. An
 * initializer the session's model does not have is an error, unless
 * `ignoreWeightsInModelWithoutCorrespondingHostWeight`.
 */
export function resetHostWeightsFromModel(imported: ImportedModel, path: string, ignoreWeightsInModelWithoutCorrespondingHostWeight: boolean): void {
  const own = new Set(imported.model.proto.graph!.initializer.map((t) => t.name));
  const assignments: Array<[tf.Variable, tf.Tensor]> = [];
  try {
    for (const proto of readModel(path).proto.graph!.initializer) {
      const name = proto.name ?? '';
      const param = imported.parameterNames.get(name);
      if (param === undefined) {
        if (own.has(name) || ignoreWeightsInModelWithoutCorrespondingHostWeight) continue;
        throw new PopartException(
          `resetHostWeights: ${path} has a weight '${name}' that the session does not have; pass ignoreWeightsInModelWithoutCorrespondingHostWeight = true to skip it`,
        );
      }
      const variable = imported.variables.get(param)!;
      const value = hostTensorToTf(tensorFromProto(proto), `resetHostWeights: weight '${name}' of ${path}`);
      assignments.push([variable, value]);
      if (value.shape.length !== variable.shape.length || value.shape.some((d, i) => d !== variable.shape[i])) {
        throw new PopartException(`resetHostWeights: weight '${name}' has shape [${value.shape.join(', ')}] in ${path}, but [${variable.shape.join(', ')}] in the session`);
      }
    }
    for (const [variable, value] of assignments) variable.assign(value);
  } finally {
    tf.dispose(assignments.map(([, value]) => value));
  }
}
