/**
 * Training checkpoints (`saveCheckpoint` / `loadCheckpoint`): the device
 * state of an executor (every replica's weights, the optimizer state, the
 * loss scale, the random generator and the iteration count) with what is
 * needed to match it to an executor: the model's name and kind, its input
 * signature and batching, and its parameters in trace order.
 *
 * Checkpoints are written atomically: a process killed while saving leaves
 * the previous checkpoint intact. They are verified when read.
 */
import { PoptfjsError } from '../common/errors.js';
import { readFileBytes } from '../common/regular_file.js';
import { writeFileAtomic } from './atomic_file.js';
import type { BatchFactors } from '../executable/batch_plan.js';
import type { DeviceState } from '../executable/device_state.js';
import { deviceStateFromMessage, deviceStateMessage } from './device_state_message.js';
import type { Executable, TensorSignature } from '../executable/executable.js';
import { factorsFromMessage, factorsMessage, kindFromMessage, kindMessage, signatureFromMessage, signatureMessage } from './executable_message.js';
import { decodeMessage, encodeMessage, Messages } from '../proto/executable_proto.js';
import { decodeFileEnvelope, encodeFileEnvelope } from './file_envelope.js';
import { optimizerConfigFromMessage, optimizerConfigMessage, type OptimizerConfig } from './optimizer_config.js';
import { parameterSpecMessages, parameterSpecsFromMessages, type ParameterSpec } from './parameter_spec.js';
import type { TensorData } from '../proto/tensor_bytes.js';

/** What a checkpoint holds. */
export interface CheckpointContents {
  readonly modelName: string;
  readonly kind: Executable['kind'];
  /** One micro-batch of each input, as compiled. */
  readonly inputSignature: readonly TensorSignature[];
  readonly microBatchSize: number;
  readonly factors: BatchFactors;
  /** The parameters, in the order the trace met them. */
  readonly parameters: readonly ParameterSpec[];
  readonly optimizer?: OptimizerConfig;
  readonly deviceState: DeviceState<TensorData>;
  /** The tfjs backend it was saved on. */
  readonly backend: string;
  /** When it was written (milliseconds since the Unix epoch). */
  readonly createdUnixMs: number;
}

/** The bytes of a checkpoint file, stamped with `version` (this poptfjs's unless given). */
export function encodeCheckpointFile(contents: CheckpointContents, version?: string): Uint8Array {
  const payload = encodeMessage(Messages.CheckpointFile, {
    model_name: contents.modelName,
    kind: kindMessage(contents.kind),
    input_signature: signatureMessage(contents.inputSignature),
    micro_batch_size: contents.microBatchSize,
    factors: factorsMessage(contents.factors),
    parameters: parameterSpecMessages(contents.parameters),
    ...(contents.optimizer ? { optimizer: optimizerConfigMessage(contents.optimizer) } : {}),
    device_state: deviceStateMessage(contents.deviceState),
    backend: contents.backend,
    created_unix_ms: contents.createdUnixMs,
  });
  return encodeFileEnvelope('checkpoint', payload, version);
}

/** What the bytes of the checkpoint `file` hold; an error naming the file and what failed otherwise. */
export function decodeCheckpointFile(bytes: Uint8Array, file: string): CheckpointContents {
  const { payload } = decodeFileEnvelope(bytes, file, 'checkpoint');
  try {
    const m = decodeMessage(Messages.CheckpointFile, payload, file);
    if (!m.device_state) throw new PoptfjsError(`${file}: the checkpoint holds no device state`, { type: 'file' });
    return {
      modelName: m.model_name,
      kind: kindFromMessage(m.kind, file),
      inputSignature: signatureFromMessage(m.input_signature, file),
      microBatchSize: m.micro_batch_size,
      factors: factorsFromMessage(m.factors, file),
      parameters: parameterSpecsFromMessages(m.parameters, file),
      ...(m.optimizer ? { optimizer: optimizerConfigFromMessage(m.optimizer, file) } : {}),
      deviceState: deviceStateFromMessage(m.device_state, file),
      backend: m.backend,
      createdUnixMs: m.created_unix_ms,
    };
  } catch (error) {
    if (error instanceof PoptfjsError) throw error;
    throw new PoptfjsError(`${file}: the checkpoint cannot be read (${error instanceof Error ? error.message : String(error)})`, {
      type: 'file',
      location: file,
      cause: error,
    });
  }
}

/** Writes a checkpoint atomically. */
export function writeCheckpointFile(path: string, contents: CheckpointContents): void {
  writeFileAtomic(path, encodeCheckpointFile(contents));
}

/** Reads and verifies a checkpoint. */
export function readCheckpointFile(path: string): CheckpointContents {
  return decodeCheckpointFile(readFileBytes(path), path);
}
