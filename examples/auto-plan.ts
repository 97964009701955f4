/**
 * The best configuration found for you: an 8-layer MLP of 4096 × 4096
 * weights (134 M parameters) trained with Adam does not fit one Mk2 IPU;
 * `autoPlan()` searches 8 IPUs at a global batch of 512 (pipeline splits,
 * replication, micro-batch, accumulation, device iterations, recomputation,
 * optimizer-state place, memory proportions) and prints the fastest
 * configuration that fits, why it wins, and its options as a PopTorch config
 * file, which `Options.loadFromFile` reads back and `plan()` plans at the
 * same throughput. Then ONNX models exported by PyTorch are planned and
 * searched without their weights (their external data files are not even
 * there): a small encoder split over 2 IPUs, and torchvision's ViT-B/16 in
 * float16, searched on 4 Bow IPUs.
 *
 * Run: npx tsx examples/auto-plan.ts [report-directory]
 * With a directory, the search's report (every candidate on a chart) is written there.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BeginBlock, Options, autoPlan, plan, tf } from 'poptfjs';

const width = 4096;

/** Eight dense layers, each a block of its own: the search places blocks on IPUs. */
function build(): tf.LayersModel {
  const layers = Array.from({ length: 8 }, (_, i) => tf.layers.dense({ units: width, activation: 'relu', name: `dense_${i}`, ...(i === 0 ? { inputShape: [width] } : {}) }));
  layers.forEach((layer, i) => BeginBlock(layer, { userId: `layer${i}` }));
  return tf.sequential({ layers });
}

const training = { loss: 'meanSquaredError', optimizer: 'adam', inputs: [{ shape: [width] }], target: { shape: [width] } } as const;
const search = await autoPlan(build, { ipus: 8, globalBatch: 512, ...training });
console.log(search.summary());

const best = search.best!;
console.log(`\nThe best configuration as a PopTorch config file (micro-batch ${best.microBatch}):\n${best.configText()}`);
const config = join(mkdtempSync(join(tmpdir(), 'auto-plan-')), 'best.conf');
writeFileSync(config, best.configText());
const again = await plan(build, {
  options: new Options().loadFromFile(config),
  loss: training.loss,
  optimizer: training.optimizer,
  inputs: [{ shape: [best.microBatch, width] }],
  target: { shape: [best.microBatch, width] },
});
console.log(`planned again from ${config}: ${again.fits ? 'fits' : 'does not fit'}, ${again.throughput.toFixed(1)} samples/s`);

const reports = process.argv[2];
if (reports) console.log(`search report: ${search.report(reports).html}`);

// An ONNX model from torch.onnx.export, its weights in an external data file that is not there: planned from the
// shapes its model file records, split into 2 pipeline stages of nearly equal time.
const encoder = new URL('../test/fixtures/onnx/planning/tiny_encoder_external.onnx', import.meta.url).pathname;
const onnxPlan = await plan(encoder, { ipus: 2, options: new Options().deviceIterations(4) });
console.log(`\nONNX: ${onnxPlan.summary().split('\n')[0]}`);
console.log(`ONNX: ${onnxPlan.parameters} parameters, their weights never read`);

// torchvision's ViT-B/16 as torch.onnx.export writes it (86 M parameters, 346 MB of weights that are not there),
// searched for inference in float16 on 4 Bow IPUs at a global batch of 256 images.
const vit = new URL('../test/fixtures/onnx/planning/vit_b_16_external.onnx', import.meta.url).pathname;
const vitSearch = await autoPlan(vit, { ipus: 4, globalBatch: 256, float16: true, options: new Options().ipuTarget('Bow') });
console.log(`\nONNX ViT-B/16: ${vitSearch.summary().split('\n').slice(0, 2).join('\nONNX ViT-B/16: ')}`);
