import * as tf from '@tensorflow/tfjs';
import { inferenceModel, ops, plan } from 'poptfjs';
const [beam, top, mode] = process.argv.slice(2);
const probs = tf.log(tf.softmax(tf.randomNormal([5, 2, 4])));
const lengths = tf.tensor1d([5, 5], 'int32');
const t0 = Date.now();
try {
  if (mode === 'eager') { ops.ctcBeamSearchDecoder(probs, lengths, 0, Number(beam), Number(top)); }
  else if (mode === 'plan') { await plan(() => (p: tf.Tensor, l: tf.Tensor) => ops.ctcBeamSearchDecoder(p, l, 0, Number(beam), Number(top)), { inputs: [{ shape: [5, 2, 4] }, { shape: [2], dtype: 'int32' }] }); }
  else { const m = inferenceModel((p: tf.Tensor, l: tf.Tensor) => ops.ctcBeamSearchDecoder(p, l, 0, Number(beam), Number(top))); await m.run(probs, lengths); }
  console.log('ok', Date.now() - t0);
} catch (e) { console.log('error', (e as Error).message.slice(0, 300), Date.now() - t0); }
console.log('rss MB', Math.round(process.memoryUsage().rss / 1e6));
