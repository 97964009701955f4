/**
 * The time the gradient all-reduce across the instances of a multi-instance
 * run takes over the host network, after each instance's replicas have
 * reduced their gradients over the IPU-Links.
 *
 * The instances form a ring all-reduce: each sends and receives 2(N-1)/N of
 * the gradient bytes over its link, so one update takes
 * `2(N-1)/N × gradient bytes / bandwidth`, once per device iteration. The
 * link's bandwidth is `POPTFJS_HOST_NETWORK_GBPS` (gigabits per second),
 * 100 by default: Graphcore's IPU-Machines scale out over their IPU-Gateway's
 * GW-Links, "high speed (100 GbE) communication links" in Graphcore's
 * IPU-POD DA build and test guide (docs.graphcore.ai/projects/ipu-podda-build-test,
 * glossary: "GW-Link: High speed (100 GbE) communication links that connect
 * IPU-M2000s horizontally across IPU-POD64 racks"; the IPU-Gateway "enables
 * IPU scaleout across 100 GbE connections (GW-Links)").
 *
 * The compiled executable is the same whatever the number of instances (each
 * instance compiles for its own replicas), so this time is added to a call's
 * simulated time when the run is known, in the summary report.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';

/** The variable that sets the host network's bandwidth, in Gbit/s. */
export const HOST_NETWORK_VARIABLE = 'POPTFJS_HOST_NETWORK_GBPS';

/** Gbit/s of a GW-Link (100 GbE). */
export const GW_LINK_GBPS = 100;

/** The host network's bandwidth in bytes/s: `POPTFJS_HOST_NETWORK_GBPS` Gbit/s, else a GW-Link's 100. */
export function hostNetworkBandwidth(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[HOST_NETWORK_VARIABLE];
  if (text === undefined) return (GW_LINK_GBPS * 1e9) / 8;
  const gbps = Number(text);
  if (text.trim() === '' || !Number.isFinite(gbps) || gbps <= 0) {
    throw new PoptfjsError(`${HOST_NETWORK_VARIABLE} must be a positive number of Gbit/s, got '${text}'`, { type: 'distributed' });
  }
  return (gbps * 1e9) / 8;
}

/** The cross-instance all-reduce of one call. */
export interface InstanceAllReduce {
  /** Instances in the run. */
  readonly instances: number;
  /** The host network's bandwidth, in bytes/s. */
  readonly bandwidth: number;
  /** Bytes of the gradients reduced at each update. */
  readonly gradientBytes: number;
  /** Seconds of one update's all-reduce. */
  readonly secondsPerUpdate: number;
  /** Updates in one call (its device iterations). */
  readonly updatesPerCall: number;
  /** Seconds of the all-reduce over one call. */
  readonly secondsPerCall: number;
}

/** The all-reduce of the gradients of `graph` across `instances` instances, `updatesPerCall` times a call, at `bandwidth` bytes/s. */
export function instanceAllReduce(graph: Graph, instances: number, updatesPerCall: number, bandwidth: number): InstanceAllReduce {
  const gradientBytes = Object.values(graph.roles.gradients ?? {}).reduce((n, id) => n + valueBytes(graph, id), 0);
  const secondsPerUpdate = (((2 * (instances - 1)) / instances) * gradientBytes) / bandwidth;
  return { instances, bandwidth, gradientBytes, secondsPerUpdate, updatesPerCall, secondsPerCall: secondsPerUpdate * updatesPerCall };
}
