/**
 * Precompilation: load an exported executable and choose the device at run
 * time with `editOpts` (PopTorch's `edit_opts_fn` example). Only run-time
 * options (device id, connection type, log settings, ...) can change; the
 * others were fixed when the executable was compiled and are ignored with a
 * warning.
 *
 * Run: npx tsx examples/precompile-export.ts && npx tsx examples/precompile-load-ipu.ts [file]
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, tf, type Options } from 'poptfjs';

const filename = process.argv[2] ?? join(tmpdir(), 'precompiled.poptfjs');

function setIpuDevice(opts: Options): void {
  opts.useIpuId(1); // always use IPU 1
}

const poptfjsModel = await load(filename, { editOpts: setIpuDevice });
const input = tf.randomNormal([1, 10], 0, 1, 'float32', 1);
const target = tf.randomNormal([1, 10], 0, 1, 'float32', 2);
const [, loss] = (await poptfjsModel(input, target)) as [tf.Tensor, tf.Tensor]; // Run on IPU 1
console.log(`ran on device ${poptfjsModel.device.id} (IPUs ${poptfjsModel.device.ipus.join(', ')}): loss ${loss.dataSync()[0]!.toFixed(6)}`);
poptfjsModel.destroy();
