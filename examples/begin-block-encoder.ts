/**
 * Splitting an existing model with `BeginBlock` (PopTorch's BERT example),
 * here a small transformer-style encoder made of tfjs layers: the embedding on
 * IPU 0, encoder layers 0-1 on IPU 1, 2-3 on IPU 2, 4-5 and the head on IPU 3,
 * pipelined over four device iterations.
 *
 * Run: npx tsx examples/begin-block-encoder.ts
 */
import { BeginBlock, Options, inferenceModel, tf } from 'poptfjs';

const vocabulary = 100;
const sequence = 8;
const width = 16;

function encoderLayer(x: tf.SymbolicTensor, i: number): { output: tf.SymbolicTensor; first: tf.layers.Layer } {
  const first = tf.layers.dense({ units: width * 2, activation: 'relu', name: `encoder_${i}_ffn_in` });
  const hidden = first.apply(x) as tf.SymbolicTensor;
  const projected = tf.layers.dense({ units: width, name: `encoder_${i}_ffn_out` }).apply(hidden) as tf.SymbolicTensor;
  const residual = tf.layers.add({ name: `encoder_${i}_residual` }).apply([x, projected]) as tf.SymbolicTensor;
  const output = tf.layers.layerNormalization({ name: `encoder_${i}_norm` }).apply(residual) as tf.SymbolicTensor;
  return { output, first };
}

const ids = tf.input({ shape: [sequence], dtype: 'int32' });
let x = tf.layers.embedding({ inputDim: vocabulary, outputDim: width, name: 'embedding' }).apply(ids) as tf.SymbolicTensor;
const encoderLayers: tf.layers.Layer[] = [];
for (let i = 0; i < 6; i++) {
  const layer = encoderLayer(x, i);
  encoderLayers.push(layer.first);
  x = layer.output;
}
const logits = tf.layers.dense({ units: 2, name: 'span_logits' }).apply(x) as tf.SymbolicTensor;
const model = tf.model({ inputs: ids, outputs: logits });

// All layers before encoder layer 0 are on IPU 0; from encoder layer 0 onwards on IPU 1.
BeginBlock(encoderLayers[0]!, { ipuId: 1 });
// From encoder layer 2 onwards on IPU 2.
BeginBlock(encoderLayers[2]!, { ipuId: 2 });
// From encoder layer 4 to the end of the network on IPU 3.
BeginBlock(encoderLayers[4]!, { ipuId: 3 });

// The data must be batched by at least the number of IPUs: each IPU still runs a micro-batch.
const opts = new Options().deviceIterations(4);
const pipelined = inferenceModel(model, { options: opts });
const input = tf.randomUniform([4, sequence], 0, vocabulary, 'int32', 3);
const out = (await pipelined(input)) as tf.Tensor;
const reference = model.predict(input) as tf.Tensor;
console.log(
  `output [${out.shape.join(', ')}], largest difference from model.predict: ${tf
    .max(tf.abs(tf.sub(out, reference)))
    .dataSync()[0]!
    .toExponential(2)}`,
);
console.log(pipelined.planText());
