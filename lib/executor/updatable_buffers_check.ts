/**
 * The names given to `Options.updatableNamedBuffers`, checked against the
 * compiled graph: each must be a buffer (a non-trainable weight the model
 * reads), which `copyNamedBuffersToDevice` may then load on its own.
 */
import { PoptfjsError } from '../common/errors.js';
import { paramValues, type Graph } from '../ir/graph.js';

/** Checks that every name given to `Options.updatableNamedBuffers` is a buffer (a non-trainable weight) of the compiled graph. */
export function checkUpdatableBuffers(graph: Graph, names: readonly string[]): void {
  const params = paramValues(graph);
  const buffers = [...params].filter(([, v]) => v.source.kind === 'param' && !v.source.trainable).map(([name]) => name);
  for (const name of names) {
    if (buffers.includes(name)) continue;
    const what = params.has(name) ? `'${name}' is a trainable weight, not a buffer` : `the model has no buffer '${name}'`;
    throw new PoptfjsError(
      `Options.updatableNamedBuffers: ${what}; its buffers (non-trainable weights it reads) are ${buffers.length > 0 ? buffers.map((b) => `'${b}'`).join(', ') : 'none'}`,
      { type: 'options' },
    );
  }
}
