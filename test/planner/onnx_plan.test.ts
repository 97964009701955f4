import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { autoPlan, Options, onnx, plan, type Plan } from 'poptfjs';
import { VIT_B16, vitClassifier } from '../../examples/models/vit.js';

const PLANNING = fileURLToPath(new URL('../fixtures/onnx/planning/', import.meta.url));
/** PyTorch's nn.TransformerEncoder (2 layers, width 64) on a 1000 × 64 embedding, every initializer in an external data file that was deleted. */
const ENCODER = join(PLANNING, 'tiny_encoder_external.onnx');
/** Four Linear(64, 64) layers, placed by PopART's virtualGraph and pipelineStage attributes: two layers on each of 2 IPUs. */
const MLP = join(PLANNING, 'mlp_pipelined.onnx');
/** Three Linear(64, 64) layers with ReLUs and a Linear(64, 10) classifier, exported in training mode with its cross-entropy loss, `loss`. */
const MLP_WITH_LOSS = join(PLANNING, 'mlp_with_loss.onnx');
/** Its parameters: 3 × (64 × 64 + 64) + 64 × 10 + 10. */
const MLP_WITH_LOSS_PARAMETERS = 3 * (64 * 64 + 64) + 64 * 10 + 10;
/** torchvision's vit_b_16 as PyTorch exports it (opset 17, a dynamic batch), its initializers in an external data file that was deleted. */
const VIT = join(PLANNING, 'vit_b_16_external.onnx');
/** vit_b_16's parameters as torchvision counts them (`ViT_B_16_Weights.IMAGENET1K_V1.meta['num_params']`). */
const VIT_B_16_PARAMETERS = 86_567_656;

/**
 * The encoder's parameters, from the initializers its model file lists (PyTorch's exporter wrote the two encoder
 * layers, identical copies, once): the embedding 1000 × 64, and one layer's in_proj bias 192, out_proj 64 × 64 + 64,
 * linear1 bias 256, linear2 bias 64, norm1 weight 64 and the products' weights 64 × 192, 64 × 256 and 256 × 64.
 */
const ENCODER_LAYER = 192 + 64 * 64 + 64 + 256 + 64 + 64 + 64 * 192 + 64 * 256 + 256 * 64;
const ENCODER_PARAMETERS = 1000 * 64 + ENCODER_LAYER;

/** A copy of the encoder in its own directory, with `weights` (a directory, or bytes) where its external data file would be. */
function encoderBeside(weights: 'directory' | Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), 'poptfjs-onnx-plan-'));
  const model = join(dir, 'tiny_encoder_external.onnx');
  copyFileSync(ENCODER, model);
  const data = join(dir, 'tiny_encoder_external.weights');
  if (weights === 'directory') mkdirSync(data);
  else writeFileSync(data, weights);
  return model;
}

describe('plan() of an ONNX model', () => {
  let missing: Plan;
  beforeAll(async () => {
    missing = await plan(ENCODER);
  }, 60_000);

  it('plans a model whose external data file is missing: reading the model needs the file, planning it does not', () => {
    expect(() => onnx.readModel(ENCODER)).toThrow(/its external data: cannot read .*tiny_encoder_external\.weights: no such file/);
    expect(missing.fits).toBe(true);
    expect(missing.parameters).toBe(ENCODER_PARAMETERS);
    expect(missing.throughput).toBeGreaterThan(0);
    // The weights take their float32 bytes, from the shapes the model file records.
    expect(missing.memory.ipus[0]!.byKind.weights).toBeGreaterThanOrEqual(4 * ENCODER_PARAMETERS);
  });

  it('never opens the external data file: a directory in its place, or a file of 3 bytes that reading refuses, plans the same', async () => {
    const short = encoderBeside(new Uint8Array([1, 2, 3]));
    expect(() => onnx.readModel(short)).toThrow(/lies beyond the end of .*tiny_encoder_external\.weights' \(3 bytes\)/);
    for (const model of [encoderBeside('directory'), short]) {
      const planned = await plan(model);
      expect(planned.memory.ipus.map((ipu) => ipu.byKind)).toEqual(missing.memory.ipus.map((ipu) => ipu.byKind));
      expect(planned.throughput).toBe(missing.throughput);
    }
    // Given as bytes, the model is planned the same, with no directory to look in.
    const bytes = await plan(new Uint8Array(readFileSync(ENCODER)));
    expect(bytes.memory.ipus[0]!.used).toBe(missing.memory.ipus[0]!.used);
  });

  it("places the nodes on the IPUs of PopART's virtualGraph attributes, as the pipeline stages of pipelineStage", async () => {
    const planned = await plan(MLP, { options: new Options().deviceIterations(4) });
    expect(planned.fits).toBe(true);
    expect(planned.memory.ipus.length).toBe(2);
    // Two Linear(64, 64) layers on each IPU: 2 × (64 × 64 + 64) float32 weights.
    for (const ipu of planned.memory.ipus) expect(ipu.byKind.weights).toBe(2 * (64 * 64 + 64) * 4);
    expect(planned.executable.placement.stages.map((s) => s.ipu)).toEqual([0, 1]);
    expect(planned.summary()).toMatch(/^Plan of '.+' for inference on 2 IPU\(s\): fits: [\d.]+ samples\/s \(simulated\); fullest IPU \d/);
  });

  it('splits a model without placement attributes into as many pipeline stages as IPUs, between its modules', async () => {
    const split = await plan(ENCODER, { ipus: 2, options: new Options().deviceIterations(4) });
    expect(split.fits).toBe(true);
    expect(split.memory.ipus.length).toBe(2);
    expect(split.parameters).toBe(ENCODER_PARAMETERS);
    // The embedding runs first, so it is on IPU 0 with the first encoder layer; the second IPU runs the second layer,
    // whose weights are the first's, so it holds them too (and the layer's scalar constants, a few bytes).
    const [first, second] = split.memory.ipus.map((ipu) => ipu.byKind.weights);
    expect(first! - 4 * ENCODER_PARAMETERS).toBeGreaterThanOrEqual(0);
    expect(first! - 4 * ENCODER_PARAMETERS).toBeLessThan(64);
    expect(second! - 4 * ENCODER_LAYER).toBeGreaterThanOrEqual(0);
    expect(second! - 4 * ENCODER_LAYER).toBeLessThan(64);
  });

  it('writes the reports a compiled model writes: HTML, JSON and a Chrome trace, named after the model', () => {
    const files = missing.report(mkdtempSync(join(tmpdir(), 'poptfjs-onnx-plan-report-')));
    expect(files.html).toMatch(/torch_jit-inference\.html$/);
    expect(readFileSync(files.html, 'utf8')).toContain('<g class="lane" data-ipu="0">');
    const json = JSON.parse(readFileSync(files.json, 'utf8'));
    expect(JSON.stringify(json)).toContain(String(missing.memory.ipus[0]!.used));
    expect(JSON.parse(readFileSync(files.trace, 'utf8')).traceEvents.length).toBeGreaterThan(0);
  });

  it('plans a training step of a model exported with its loss, with the state its optimizer keeps', async () => {
    const adam = await plan(MLP_WITH_LOSS, { loss: 'loss', optimizer: 'adam', batch: 8 });
    expect(adam.executable.kind).toBe('training');
    expect(adam.parameters).toBe(MLP_WITH_LOSS_PARAMETERS);
    expect(adam.summary()).toMatch(/^Plan of '.+' for training on 1 IPU\(s\): fits/);
    // Adam keeps two float32 moments a weight; one micro-batch a step needs no gradient accumulator.
    expect(adam.memory.ipus[0]!.byKind['optimizer state']).toBe(2 * 4 * MLP_WITH_LOSS_PARAMETERS);
    expect(adam.memory.ipus[0]!.byKind['gradient accumulators']).toBe(0);
    // SGD without momentum keeps nothing; 3 micro-batches a step accumulate each gradient in a float32 tensor.
    const options = new Options();
    options.Training.gradientAccumulation(3);
    const sgd = await plan(MLP_WITH_LOSS, { loss: 'loss', optimizer: 'sgd', batch: 8, options });
    expect(sgd.memory.ipus[0]!.byKind['optimizer state']).toBe(0);
    expect(sgd.memory.ipus[0]!.byKind['gradient accumulators']).toBe(4 * MLP_WITH_LOSS_PARAMETERS);
    expect(sgd.samplesPerCall).toBe(3 * 8);
  });

  it('refuses what it cannot plan, naming what is expected', async () => {
    await expect(plan(join(PLANNING, 'no_such_model.onnx'))).rejects.toThrow(/plan: cannot read the ONNX model '.*no_such_model\.onnx'/);
    await expect(plan(ENCODER, { ipus: 0 })).rejects.toThrow(/plan: ipus must be a positive integer, got 0/);
    await expect(plan(ENCODER, { optimizer: 'adam' })).rejects.toThrow(/an optimizer needs a loss: give the name of the loss tensor/);
    await expect(plan(MLP_WITH_LOSS, { loss: 'logits', batch: 8 })).rejects.toThrow("plan: the loss 'logits' is no tensor of the model; its graph outputs: 'loss'");
    await expect(plan(ENCODER, { inputs: [{ shape: [4, 16] }, { shape: [4] }] })).rejects.toThrow(/the model has 1 graph input\(s\) \(tokens\); inputs gives 2/);
  });
});

describe("plan() of torchvision's ViT-B/16 as PyTorch exports it", () => {
  it('plans it without its weights, with every parameter torchvision counts, as fast as the same ViT written in tfjs', async () => {
    // Inference on one Bow IPU at micro-batch 17, as ViT-B/16's fine-tuning configuration feeds it.
    const options = () => new Options().ipuTarget('Bow').deviceIterations(16).setAvailableMemoryProportion({ IPU0: 0.3 });
    const exported = await plan(VIT, { options: options(), inputs: [{ shape: [17, 3, 224, 224] }] });
    const written = await plan(() => vitClassifier({ ...VIT_B16, hiddenDropout: 0 }, { layersPerIpu: [12] }), {
      options: options(),
      inputs: [{ shape: [17, 224, 224, 3] }, { shape: [17, 1000] }],
    });
    expect(() => onnx.readModel(VIT)).toThrow(/its external data: cannot read .*vit_b_16_external\.weights: no such file/);
    expect(exported.parameters).toBe(VIT_B_16_PARAMETERS);
    expect(written.parameters).toBe(VIT_B_16_PARAMETERS);
    expect(exported.fits).toBe(true);
    // The same products, attention, LayerNorms and GELUs, from PyTorch's ONNX operators and from tfjs's kernels:
    // torchvision projects query, key and value with one product where the tfjs model runs three, which saves a
    // little exchange, so the exported model is planned a few percent faster, never more than 5%.
    const ratio = exported.throughput / written.throughput;
    expect(ratio).toBeGreaterThanOrEqual(1);
    expect(ratio).toBeLessThan(1.05);
  }, 120_000);

  it('plans it in float16, as model.half() runs it, as fast as the tfjs ViT in float16', async () => {
    const options = () => {
      const o = new Options().ipuTarget('Bow').deviceIterations(16).setAvailableMemoryProportion({ IPU0: 0.3 });
      o.Precision.setPartialsType('half');
      return o;
    };
    const exported = await plan(VIT, { options: options(), inputs: [{ shape: [17, 3, 224, 224] }], float16: true });
    const written = await plan(() => vitClassifier({ ...VIT_B16, hiddenDropout: 0 }, { layersPerIpu: [12], float16: true }), {
      options: options(),
      inputs: [
        { shape: [17, 224, 224, 3], dtype: 'float16' },
        { shape: [17, 1000], dtype: 'float16' },
      ],
    });
    // Two bytes a parameter, and a few for the exporter's scalar constants.
    const weights = exported.memory.ipus[0]!.byKind.weights;
    expect(weights - 2 * VIT_B_16_PARAMETERS).toBeGreaterThanOrEqual(0);
    expect(weights - 2 * VIT_B_16_PARAMETERS).toBeLessThan(1024);
    const ratio = exported.throughput / written.throughput;
    expect(ratio).toBeGreaterThanOrEqual(1);
    expect(ratio).toBeLessThan(1.05);
  }, 120_000);

  it("splits it over 4 IPUs between PyTorch's modules, three encoder layers a stage, and names the first and last few of each stage", async () => {
    const split = await plan(VIT, { ipus: 4, options: new Options().ipuTarget('Bow').deviceIterations(16), inputs: [{ shape: [17, 3, 224, 224] }] });
    expect(split.fits).toBe(true);
    const stages = split
      .summary()
      .split('\n')
      .filter((line) => /^ {2}stage \d/.test(line));
    expect(stages.length).toBe(4);
    // The units of an ONNX model are the modules PyTorch's exporter names its nodes after (the model's own code is
    // '/'): the patch convolution opens the first stage and the classifier closes the last, and each stage ends with
    // the feed-forward of its third encoder layer, whose residual add opens the next. A stage line counts its blocks
    // and lists five of them.
    expect(stages[0]).toMatch(
      /^ {2}stage 0 \(id 0\) on IPU 0: blocks '\/conv_proj', '\/', '\/encoder', … \d+ more …, '[^']+', '\/encoder\/layers\/encoder_layer_2\/mlp\/mlp\.3' \(\d+ blocks\)$/,
    );
    for (const [i, last] of [
      [1, 5],
      [2, 8],
    ] as const) {
      expect(stages[i]).toMatch(
        new RegExp(`^ {2}stage ${i} .*: blocks '/encoder/layers/encoder_layer_${last - 3}#2', .*, '/encoder/layers/encoder_layer_${last}/mlp/mlp\\.3' \\(\\d+ blocks\\)$`),
      );
    }
    expect(stages[3]).toMatch(/, '\/heads\/head' \(\d+ blocks\)$/);
  }, 120_000);
});

describe('autoPlan() of an ONNX model', () => {
  it('searches a model exported with its loss, its modules the units of its pipeline splits', async () => {
    const search = await autoPlan(MLP_WITH_LOSS, { ipus: 4, globalBatch: 96, loss: 'loss', optimizer: 'adam' });
    expect(search.best?.fits).toBe(true);
    expect(search.best!.plan.executable.kind).toBe('training');
    const rates = search.candidates.map((c) => c.throughput);
    expect(rates).toEqual([...rates].sort((a, b) => b - a));
    // Every candidate runs the global batch: micro-batch × replicas × accumulation.
    for (const c of [...search.candidates, ...search.rejected]) expect(c.microBatch * c.replicas * c.gradientAccumulation).toBe(96);
    // A pipelined candidate's stages name the model's modules, in order: '/' is the model's own code, here the loss
    // (its ReLUs are fused into the products before them).
    const pipelined = search.candidates.find((c) => c.ipusPerReplica === 4)!;
    expect(pipelined.split.stages.flat()).toEqual(['/hidden.0', '/hidden.1', '/hidden.2', '/classifier', '/']);
    // The batch axis is dynamic: two imports give every micro-batch size.
    expect(search.traces).toBeLessThanOrEqual(3);
  }, 120_000);

  it('keeps the batch a model exported without a dynamic batch axis fixes, and refuses a request it cannot search', async () => {
    const search = await autoPlan(ENCODER, { ipus: 2, globalBatch: 16 });
    expect(search.best?.fits).toBe(true);
    expect(new Set([...search.candidates, ...search.rejected].map((c) => c.microBatch))).toEqual(new Set([4]));
    await expect(autoPlan(ENCODER, { ipus: 2, globalBatch: 16, space: { microBatch: [8] } })).rejects.toThrow(
      "autoPlan: the model's inputs fix the batch at 4 (it was exported without a dynamic batch axis): search microBatch [4], or export it with one",
    );
    await expect(autoPlan(MLP_WITH_LOSS, { ipus: 2, globalBatch: 16, loss: 'loss', target: { shape: [10] } } as never)).rejects.toThrow(
      'autoPlan: an ONNX model trains with the loss in its graph: give loss, the name of its loss tensor (a model exported with its loss), and no target',
    );
    await expect(autoPlan(MLP_WITH_LOSS, { ipus: 2, globalBatch: 16, inputs: [{ shape: [64] }] })).rejects.toThrow(
      "autoPlan: the model has 2 graph input(s) (x, labels); inputs must give one sample's shape of each",
    );
  }, 120_000);
});
