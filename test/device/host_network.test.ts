import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, trainingModel } from 'poptfjs';
import { GW_LINK_GBPS, hostNetworkBandwidth, instanceAllReduce } from '../../lib/device/host_network.js';
import { instanceAllReduceSummary } from '../../lib/report/summary_report.js';

describe('the gradient all-reduce across instances over the host network', () => {
  it('takes 2(N-1)/N of the gradient bytes over the link, once per device iteration, as computed by hand', async () => {
    // Dense(256 → 1000) with a bias: (256 × 1000 + 1000) float32 gradients = 1,028,000 bytes.
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 1000, inputShape: [256] })] });
    const opts = new Options().deviceIterations(3);
    const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError' });
    await executor.compile(tf.zeros([3, 256]), tf.zeros([3, 1000]));
    const { executable } = executor;
    // 8 Gbit/s = 1e9 bytes/s; 4 instances send 2 × 3 / 4 = 1.5 times the bytes: 1,542,000 bytes, 1.542 ms per update.
    const allReduce = instanceAllReduce(executable.graph, 4, executable.factors.deviceIterations, hostNetworkBandwidth({ POPTFJS_HOST_NETWORK_GBPS: '8' }));
    expect(allReduce.gradientBytes).toBe(1_028_000);
    expect(allReduce.bandwidth).toBe(1e9);
    expect(allReduce.secondsPerUpdate).toBeCloseTo(1.542e-3, 12);
    expect(allReduce.updatesPerCall).toBe(3);
    expect(allReduce.secondsPerCall).toBeCloseTo(4.626e-3, 12);
    const call = executable.hardware.timeline.duration + 4.626e-3;
    expect(instanceAllReduceSummary(executable, allReduce).split('\n')).toEqual([
      'Gradient all-reduce across 4 instances over the host network (8.0 Gbit/s):',
      "  1003.9 KiB of gradients per update, 2(4-1)/4 of them over each instance's link: 1.542 ms per update",
      `  3 update(s) per call: 4.626 ms; a call takes ${(call * 1e3).toFixed(3)} ms with it (${((100 * 4.626e-3) / call).toFixed(1)}% in this all-reduce)`,
    ]);
    executor.destroy();
  });

  it("defaults to a GW-Link's 100 Gbit/s and refuses a bandwidth that is not a positive number", () => {
    expect(GW_LINK_GBPS).toBe(100);
    expect(hostNetworkBandwidth({})).toBe(12.5e9);
    expect(hostNetworkBandwidth({ POPTFJS_HOST_NETWORK_GBPS: '25' })).toBe(3.125e9);
    for (const bad of ['0', '-1', 'fast', '']) {
      expect(() => hostNetworkBandwidth({ POPTFJS_HOST_NETWORK_GBPS: bad })).toThrow(`POPTFJS_HOST_NETWORK_GBPS must be a positive number of Gbit/s, got '${bad}'`);
    }
  });
});
