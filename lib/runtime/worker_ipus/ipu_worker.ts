/**
 * The program of a worker IPU: one simulated IPU in its own
 * `node:worker_threads` thread, with its own tfjs backend (chosen as the main
 * thread's was, with poptfjs's kernels registered).
 *
 * It decodes the executable's graph from its protobuf message, then runs the
 * work items the main thread posts, in order: it takes the weights, inputs
 * and values the item brings, runs the unit's nodes in the micro-batch's
 * environment (which keeps the values passed between this IPU's units until
 * the micro-batch's last unit here), and posts back the values the item
 * exports. Every reply bumps the shared counter the main thread waits on; when
 * the thread exits, for any reason, its state word says so.
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import type * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../backend/backend_selection.js';
import { hostHeap, type HostHeap } from '../../backend/host_heap.js';
import { causedByOutOfMemory, hostOutOfMemory, kernelMemoryGuard } from '../../host_memory/host_memory_error.js';
import { PoptfjsError } from '../../common/errors.js';
import type { NodeId } from '../../ir/graph.js';
import { decodeMessage, Messages } from '../../proto/executable_proto.js';
import { GraphInterpreter, type GraphEnvironment } from '../graph_interpreter.js';
import { graphFromMessage } from '../../proto/graph_message.js';
import { ReplayedRandomNumbers } from './random_draws.js';
import { WeightCopies } from './weight_copies.js';
import { tensorFromWire, transferList, wireTensor, type WireTensor } from './wire_tensor.js';
import {
  REPLY_COUNTER,
  WORKER_STATE,
  WorkerState,
  type DoneReply,
  type FailedReply,
  type MainMessage,
  type WorkMessage,
  type WorkerReply,
  type WorkerSetup,
} from './worker_messages.js';

/** The values of one micro-batch of one replica on this IPU. */
interface MicroBatchRun {
  readonly env: GraphEnvironment;
  /** The graph inputs received so far (owned here). */
  readonly inputs: Array<tf.Tensor | undefined>;
}

const setup = workerData as WorkerSetup;
/** This worker's heap: its own backend's. */
let heap: HostHeap;
const signal = new Int32Array(setup.signal);
const port: MessagePort = setup.port;

function notifyMain(): void {
  Atomics.add(signal, REPLY_COUNTER, 1);
  Atomics.notify(signal, REPLY_COUNTER);
}

function post(reply: WorkerReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(reply, transfer);
  notifyMain();
}

process.on('exit', () => {
  Atomics.store(signal, WORKER_STATE + setup.slot, WorkerState.stopped);
  notifyMain();
});

function failure(error: unknown, seq?: number, node?: NodeId): FailedReply {
  const base = { kind: 'failed' as const, ...(seq !== undefined ? { seq } : {}), ...(node !== undefined ? { node } : {}) };
  if (error instanceof PoptfjsError) return { ...base, message: error.message, type: error.type, location: error.location };
  return { ...base, message: error instanceof Error ? error.message : String(error) };
}

/** The state of this worker IPU. */
class IpuWorker {
  private readonly weights = new WeightCopies<tf.Tensor>((t) => t.dispose());
  private readonly runs = new Map<string, MicroBatchRun>();
  private readonly random = new ReplayedRandomNumbers();

  constructor(
    private readonly interpreter: GraphInterpreter,
    private readonly unitNodes: Readonly<Record<number, readonly NodeId[]>>,
  ) {}

  handle(message: MainMessage): void {
    if (message.kind === 'reset') this.reset();
    else this.work(message);
  }

  private reset(): void {
    for (const key of [...this.runs.keys()]) this.release(key);
    this.weights.clear();
    this.random.clear();
  }

  private release(key: string): void {
    const run = this.runs.get(key);
    if (!run) return;
    run.env.dispose();
    for (const t of run.inputs) t?.dispose();
    this.runs.delete(key);
  }

  private runOf(message: WorkMessage): MicroBatchRun {
    const key = `${message.replica}:${message.microBatch}`;
    let run = this.runs.get(key);
    if (!run) {
      const inputs: Array<tf.Tensor | undefined> = new Array(this.interpreter.graph.inputs.length).fill(undefined);
      const env = this.interpreter.environment({ inputs: inputs as tf.Tensor[], params: this.weights.valuesOf(message.replica), random: this.random });
      this.runs.set(key, (run = { env, inputs }));
    }
    return run;
  }

  private work(message: WorkMessage): void {
    const started = performance.now();
    let node: NodeId | undefined;
    try {
      for (const w of message.weights) this.weights.set(w.replica, w.param, w.key, w.tensor ? tensorFromWire(w.tensor) : undefined);
      const run = this.runOf(message);
      for (const [index, w] of message.inputs) {
        run.inputs[index]?.dispose();
        run.inputs[index] = tensorFromWire(w);
      }
      for (const [id, w] of message.values) run.env.store(id, tensorFromWire(w));
      this.random.load(message.random);
      const computeStart = performance.now();
      for (const id of this.unitNodes[message.unit] ?? []) {
        node = id;
        this.interpreter.runNodes([id], run.env);
      }
      node = undefined;
      const computeMs = performance.now() - computeStart;
      const values = message.exports.map((id): [number, WireTensor] => {
        if (!run.env.has(id)) throw new PoptfjsError(`value %${id} to send back was not computed on this IPU`, { type: 'runtime' });
        return [id, wireTensor(run.env.input(id))];
      });
      if (message.release) this.release(`${message.replica}:${message.microBatch}`);
      const reply: DoneReply = { kind: 'done', seq: message.seq, values, busyMs: performance.now() - started, computeMs };
      post(reply, transferList(values.map(([, w]) => w)));
    } catch (error) {
      this.random.clear();
      post(failure(causedByOutOfMemory(error) ? hostOutOfMemory(heap, setup.memory, error) : error, message.seq, node));
    }
  }
}

async function start(): Promise<IpuWorker> {
  await initBackend(setup.backend);
  heap = hostHeap();
  const graph = graphFromMessage(decodeMessage(Messages.Graph, setup.graph, `the graph sent to the worker of IPU ${setup.ipu}`), 'graph');
  const beforeKernel = kernelMemoryGuard(graph, heap, () => setup.memory);
  return new IpuWorker(new GraphInterpreter(graph, { float16: setup.float16, ...(beforeKernel ? { beforeKernel } : {}) }), setup.unitNodes);
}

try {
  const worker = await start();
  port.on('message', (message: MainMessage) => worker.handle(message));
  Atomics.store(signal, WORKER_STATE + setup.slot, WorkerState.running);
  post({ kind: 'ready' });
} catch (error) {
  post(failure(error));
  port.close();
}
