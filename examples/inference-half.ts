/**
 * The float16 inference example of PopTorch's guide ("16-bit float
 * support"): a Linear(1, 10) layer whose parameters are cast to float16 with
 * `half` (PyTorch's `model.half()`), fed the float16 input [1.0]; the output
 * is float16.
 *
 * tfjs has no float16 dtype: float16 tensors are float32 tensors holding
 * float16 values, and `dtypeOf` tells them apart.
 *
 * Run: npx tsx examples/inference-half.ts
 */
import { dtypeOf, half, inferenceModel, isFloat16Value, tf } from 'poptfjs';

const model = tf.sequential({ layers: [tf.layers.dense({ units: 10, inputShape: [1], biasInitializer: 'randomNormal' })] });

// Cast the parameters (weights) to half.
half(model);

const t1 = half(tf.tensor2d([[1.0]]));

const inference = inferenceModel(model);
const out = (await inference(t1)) as tf.Tensor;

console.log(`output: [${Array.from(out.dataSync(), (v) => v.toFixed(4)).join(', ')}]`);
console.log(`output dtype: ${dtypeOf(out)} (executor.outputDtypes(): ${inference.outputDtypes().join(', ')})`);
const representable = Array.from(out.dataSync()).every(isFloat16Value);
console.log(`every output value is a float16 value: ${representable}`);
if (dtypeOf(out) !== 'float16' || !representable) {
  console.error('expected a float16 output');
  process.exit(1);
}
