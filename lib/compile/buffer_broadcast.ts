/**
 * Buffers with replicas, as PopTorch treats them: PopTorch does not broadcast
 * the buffers a model writes (batch-norm statistics, counters) from one
 * replica to the others, and refuses a model that writes one while
 * `broadcastBuffers` is on (the default) and it runs on more than one
 * replica (poptorch/source/InplaceOps.cpp). With `broadcastBuffers(false)`
 * each replica keeps its own buffers; a model that only reads its buffers
 * runs either way.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph } from '../ir/graph.js';

/** The buffers `graph` writes, each once, quoted, in the order it first writes them. */
export function writtenBuffers(graph: Graph): string[] {
  return [...new Set(graph.assignments.map((a) => `'${a.param}'`))];
}

/** Refuses a graph that writes buffers on more than one replica while buffers are to be broadcast, with PopTorch's message. */
export function checkBufferBroadcast(graph: Graph, replicationFactor: number, broadcastBuffers: boolean): void {
  if (!broadcastBuffers || replicationFactor <= 1 || graph.assignments.length === 0) return;
  const written = writtenBuffers(graph).join(', ');
  throw new PoptfjsError(
    `poptfjs does not support broadcasting buffers (the model writes ${written} on ${replicationFactor} replicas). ` +
      'If your model is able to tolerate buffers becoming out of sync between replicas, you can disable buffer broadcasting using Options.broadcastBuffers(false).',
    { type: 'replication' },
  );
}
