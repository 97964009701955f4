/**
 * A tfjs IO handler for the local file system, in tfjs's own model format
 * (`model.json` and a binary weights file), that works without
 * `@tensorflow/tfjs-node`: `model.save('file://dir')` and
 * `tf.loadLayersModel('file://dir/model.json')` use it once poptfjs is
 * imported (when tfjs-node is loaded, its own `file://` handler is used).
 *
 * Saving writes the weights to `weights.<hash>.bin`, named after the first
 * 16 hex digits of their SHA-256, then `model.json`, each atomically; the
 * rename of `model.json` commits the pair, so a process killed while saving
 * leaves the previous model intact. The previous weights file is removed
 * afterwards. Loading reads the model.json as layers_model_json.ts checks
 * it, compares the size of the weights files with the manifest before
 * reading them and, for files named so, checks their hash.
 */
import * as tf from '@tensorflow/tfjs';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PoptfjsError } from '../common/errors.js';
import { readFileBytes, regularFileSize } from '../common/regular_file.js';
import { writeFileAtomic } from './atomic_file.js';
import { readLayersModelJson } from './layers_model_json.js';

/** The URL scheme of the handler. */
export const FILE_SCHEME = 'file://';

const MODEL_JSON = 'model.json';
const HASHED_WEIGHTS = /^weights\.([0-9a-f]{16})\.bin$/;

function ioError(path: string, message: string, cause?: unknown): PoptfjsError {
  return new PoptfjsError(`${path}: ${message}`, { type: 'file', location: path, ...(cause !== undefined ? { cause } : {}) });
}

function bytesOf(data: tf.io.WeightData | undefined): Uint8Array {
  if (data === undefined) return new Uint8Array(0);
  return new Uint8Array(new tf.io.CompositeArrayBuffer(data).slice());
}

/** The model.json of the model at `path`: `path` itself when it names a `.json` file, else `path/model.json`. */
export function modelJsonPath(path: string): string {
  return path.endsWith('.json') ? path : join(path, MODEL_JSON);
}

/** A handler saving to the directory `dir` and loading `dir/model.json` (or the `.json` file `path`). */
export function fileSystemHandler(path: string): tf.io.IOHandler {
  const modelFile = modelJsonPath(path);
  const dir = dirname(modelFile);
  return {
    async save(artifacts: tf.io.ModelArtifacts): Promise<tf.io.SaveResult> {
      if (artifacts.modelTopology instanceof ArrayBuffer) throw ioError(modelFile, 'cannot save a binary model topology; save a tf.LayersModel');
      const weights = bytesOf(artifacts.weightData);
      const weightsName = `weights.${createHash('sha256').update(weights).digest('hex').slice(0, 16)}.bin`;
      let previous: string[] = [];
      try {
        statSync(modelFile);
        previous = readLayersModelJson(modelFile).json.weightsManifest.flatMap((group) => group.paths);
      } catch {
        previous = [];
      }
      try {
        mkdirSync(dir, { recursive: true });
      } catch (error) {
        throw ioError(dir, `cannot create the directory (${error instanceof Error ? error.message : String(error)})`, error);
      }
      writeFileAtomic(join(dir, weightsName), weights);
      const modelJson: tf.io.ModelJSON = {
        modelTopology: artifacts.modelTopology!,
        format: artifacts.format ?? 'layers-model',
        generatedBy: artifacts.generatedBy ?? `TensorFlow.js tfjs-layers v${tf.version.tfjs}`,
        convertedBy: artifacts.convertedBy ?? null,
        weightsManifest: [{ paths: [`./${weightsName}`], weights: artifacts.weightSpecs ?? [] }],
        ...(artifacts.trainingConfig ? { trainingConfig: artifacts.trainingConfig } : {}),
        ...(artifacts.signature ? { signature: artifacts.signature } : {}),
        ...(artifacts.userDefinedMetadata ? { userDefinedMetadata: artifacts.userDefinedMetadata } : {}),
        ...(artifacts.modelInitializer ? { modelInitializer: artifacts.modelInitializer } : {}),
        ...(artifacts.initializerSignature ? { initializerSignature: artifacts.initializerSignature } : {}),
      };
      writeFileAtomic(modelFile, new TextEncoder().encode(JSON.stringify(modelJson)));
      for (const old of previous) {
        const name = basename(old);
        if (name !== weightsName && HASHED_WEIGHTS.test(name)) rmSync(join(dir, name), { force: true });
      }
      return { modelArtifactsInfo: tf.io.getModelArtifactsInfoForJSON(artifacts) };
    },

    async load(): Promise<tf.io.ModelArtifacts> {
      const { json, weightFiles, weightBytes } = readLayersModelJson(modelFile);
      return tf.io.getModelArtifactsForJSON(json, async (manifest) => {
        const held = weightFiles.reduce((n, file) => n + regularFileSize(file), 0);
        if (held !== weightBytes) {
          throw ioError(
            modelFile,
            `the manifest describes ${weightBytes} bytes of weights, but the weights files hold ${held}; they are truncated or belong to another model`,
          );
        }
        const data = new Uint8Array(weightBytes);
        let offset = 0;
        for (const file of weightFiles) {
          const bytes = readFileBytes(file, { maxBytes: weightBytes - offset, what: 'the rest of the weights' });
          const hashed = HASHED_WEIGHTS.exec(basename(file));
          if (hashed && createHash('sha256').update(bytes).digest('hex').slice(0, 16) !== hashed[1]) {
            throw ioError(file, 'the weights do not match the hash in their name; the file is corrupted');
          }
          data.set(bytes, offset);
          offset += bytes.length;
        }
        if (offset !== weightBytes) throw ioError(modelFile, `the weights files changed while they were read (${offset} of ${weightBytes} bytes)`);
        return [tf.io.getWeightSpecs(manifest), data.buffer];
      });
    },
  };
}

/** The local path of a `file://` URL. */
function pathOfUrl(url: string): string {
  return url.startsWith('file:///') ? fileURLToPath(url) : url.slice(FILE_SCHEME.length);
}

/** True when `@tensorflow/tfjs-node` is loaded (it brings its own `file://` handler). */
function tfjsNodeLoaded(): boolean {
  return tf.findBackendFactory('tensorflow') != null;
}

function fileRouter(url: string | string[]): tf.io.IOHandler | null {
  if (Array.isArray(url) || !url.startsWith(FILE_SCHEME) || tfjsNodeLoaded()) return null;
  return fileSystemHandler(pathOfUrl(url));
}

// tfjs's routers return null for URLs they do not handle (the registry skips them), which its router type leaves out.
const router = fileRouter as unknown as Parameters<typeof tf.io.registerSaveRouter>[0];
tf.io.registerSaveRouter(router);
tf.io.registerLoadRouter(router);
