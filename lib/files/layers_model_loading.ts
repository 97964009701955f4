/**
 * Loading a saved tfjs layers model from the file system, as `poptfjs plan`
 * does: the model.json and the weights are read and checked by poptfjs's
 * file handler (file_system_io.ts), then tfjs builds the model; whatever
 * goes wrong, in the file or in tfjs's building of it (a Dense layer with
 * negative units, a kernel larger than its input, an unknown loss), is one
 * error naming the model's file.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { fileSystemHandler, modelJsonPath } from './file_system_io.js';

/** Loads the layers model saved at `path` (its directory or its model.json); any failure is an error naming the file. */
export async function loadLayersModelFile(path: string): Promise<tf.LayersModel> {
  const file = modelJsonPath(path);
  try {
    return await tf.loadLayersModel(fileSystemHandler(path));
  } catch (error) {
    if (error instanceof PoptfjsError) throw error;
    const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    throw new PoptfjsError(`${file}: tfjs cannot build the model it describes: ${message}`, { type: 'file', location: file, cause: error });
  }
}
