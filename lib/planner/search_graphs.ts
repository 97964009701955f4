/**
 * The graphs a search compiles: the model traced with shapes only (a tfjs
 * model built and traced, or an ONNX model imported) at each micro-batch
 * size it needs, or at two sizes when its graph at every other size can be
 * derived from them (see `MicroBatchGraph`), with the IR patterns applied to
 * each size's graph as `plan()` applies them and its units (blocks, layers
 * or ONNX nodes) named as at the first size.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import type { PlanTrace } from '../executor/model_plan.js';
import { applyPatterns, patternsFromSetting } from '../ir/patterns/patterns.js';
import type { Options } from '../options/options.js';
import { MicroBatchDerivationError, MicroBatchGraph } from './micro_batch_graph.js';
import { renamedUnits, unitGraph, type UnitGraph } from './split_units.js';

const log = getLogger('plan');

/** The graph of one micro-batch size, with its units as blocks and the patterns applied. */
export interface SearchGraph {
  readonly trace: PlanTrace;
  readonly units: UnitGraph;
}

/** An error of `autoPlan()`'s request. */
export function searchError(message: string): PoptfjsError {
  return new PoptfjsError(`autoPlan: ${message}`, { type: 'executor' });
}

/** The model traced with shapes only at micro-batch `m`: a tfjs model built and traced, or an ONNX model imported. */
export type SearchTracer = (m: number) => Promise<PlanTrace>;

/** The graph of a model at each micro-batch size a search asks for, traced as few times as the model allows. */
export class SearchGraphs {
  /** Times the model was built and traced. */
  traces = 0;
  readonly #graphs = new Map<number, SearchGraph>();
  /** The last traced graph, and the graph at every size once two traces differ only in numbers that follow the micro-batch. */
  #anchor: { m: number; trace: PlanTrace } | undefined;
  #derivation: { graph: MicroBatchGraph; trace: PlanTrace } | undefined;

  constructor(
    private readonly trace: SearchTracer,
    private readonly base: Options,
    private readonly training: boolean,
    /** The unit of a node's layer, as `unitGraph` takes it (ONNX models: its module). */
    private readonly unitOfLayer?: (layer: string) => string,
  ) {}

  /** The graph at the first size asked for: its units are the search's. */
  get first(): SearchGraph | undefined {
    return this.#graphs.values().next().value;
  }

  /** The graph at micro-batch `m`. */
  async at(m: number): Promise<SearchGraph> {
    const known = this.#graphs.get(m);
    if (known) return known;
    const trace = await this.#tracedAt(m);
    // The patterns, on the backend the compile runs on, as a plan of the model applies them (they may choose by size); then the units of what remains.
    const patterned = applyPatterns(trace.graph, patternsFromSetting(this.base.settings.patterns), { backend: tf.getBackend(), training: this.training }).graph;
    let units = unitGraph(patterned, this.unitOfLayer);
    // The model built again: layers tfjs named anew (dense_7 for dense_1) are the same layers, under the first trace's names.
    const names = this.first?.units.units;
    if (names && !units.blocks && units.units.length === names.length) units = renamedUnits(units, names);
    if (names && JSON.stringify(units.units) !== JSON.stringify(names)) {
      const sizes = [...this.#graphs.keys(), m];
      throw searchError(`the model's blocks or layers differ between micro-batch sizes (${sizes.join(', ')}); a search needs the same units at every size`);
    }
    const made = { trace: { ...trace, graph: units.graph }, units };
    this.#graphs.set(m, made);
    return made;
  }

  /** The graph as traced at `m`: derived when two traces allow it, else traced. */
  async #tracedAt(m: number): Promise<PlanTrace> {
    const derivation = this.#derivation;
    if (derivation) {
      try {
        const graph = derivation.graph.at(m);
        const examples = derivation.trace.examples.map((e) => ({ ...e, shape: [m, ...e.shape.slice(1)] }));
        return { ...derivation.trace, graph, examples, microBatch: m };
      } catch (error) {
        if (!(error instanceof MicroBatchDerivationError)) throw error;
        log.debug(() => `autoPlan: micro-batch ${m} is traced: ${error.message}`);
      }
    }
    return this.#traceAt(m);
  }

  /** The model traced at `m`; with the last trace, the derivation of every other size if they allow it. */
  async #traceAt(m: number): Promise<PlanTrace> {
    this.traces++;
    const trace = await this.trace(m);
    if (!this.#derivation && this.#anchor) {
      try {
        this.#derivation = { graph: new MicroBatchGraph(this.#anchor.trace.graph, this.#anchor.m, trace.graph, m), trace: this.#anchor.trace };
      } catch (error) {
        if (!(error instanceof MicroBatchDerivationError)) throw error;
        log.debug(() => `autoPlan: micro-batch ${m} is traced, and the next size too: ${error.message}`);
      }
    }
    this.#anchor = { m, trace };
    return trace;
  }
}
