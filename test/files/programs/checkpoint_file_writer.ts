/**
 * Writes checkpoint files to `<dir>/state.ckpt` as fast as it can, forever,
 * without loading tfjs (so it starts in a fraction of a second): generation
 * `g` holds 2^20 weights all equal to `g` and `iterations = g`. The crash
 * test kills it at random moments and checks the file it leaves. Prints
 * `ready` once the first file exists.
 *
 * Run: node --import tsx test/files/programs/checkpoint_file_writer.ts <dir>
 */
import { join } from 'node:path';
import { writeCheckpointFile } from '../../../lib/files/checkpoint_file.js';
import { CommGroupType } from '../../../lib/option_vocabulary/enums.js';

const path = join(process.argv[2]!, 'state.ckpt');
const size = 1 << 18;

function write(generation: number): void {
  writeCheckpointFile(path, {
    modelName: 'crash-test',
    kind: 'training',
    inputSignature: [{ shape: [1, 512], dtype: 'float32' }],
    microBatchSize: 1,
    factors: { deviceIterations: 1, replicationFactor: 1, inputGroupSize: 1, inputGroupType: CommGroupType.Consecutive, gradientAccumulation: 1 },
    parameters: [{ name: 'w', shape: [512, 512], dtype: 'float32', trainable: true }],
    deviceState: {
      weights: new Map([['w', [{ shape: [512, 512], dtype: 'float32', data: new Float32Array(size).fill(generation) }]]]),
      optimizerStates: [],
      lossScale: 1,
      randomState: [1, 2, 3, generation + 1],
      iterations: generation,
    },
    backend: 'cpu',
    createdUnixMs: Date.now(),
  });
}

write(0);
process.stdout.write('ready\n');
for (let generation = 1; ; generation++) write(generation);
