/** The machine and software a benchmark run measured, as label/value rows. */
import { cpus, release, totalmem, type } from 'node:os';
import { currentBackend, tf, wasmThreads } from 'poptfjs';

/** What is described for each run. */
export interface MachineRow {
  /** What is described, e.g. `CPU`. */
  readonly label: string;
  /** Its description. */
  readonly value: string;
}

/** The CPU, cores, memory, OS, Node.js, tfjs and backend of this run, and `extra` rows (e.g. PyTorch). */
export function describeMachine(extra: readonly MachineRow[] = []): MachineRow[] {
  const cores = cpus();
  return [
    { label: 'CPU', value: cores[0]?.model.trim() ?? 'unknown' },
    { label: 'cores', value: String(cores.length) },
    { label: 'memory', value: `${(totalmem() / 2 ** 30).toFixed(1)} GiB` },
    { label: 'OS', value: `${type()} ${release()}` },
    { label: 'Node.js', value: process.version },
    { label: 'tfjs', value: `${tf.version.tfjs}, backend '${currentBackend()}'${currentBackend() === 'wasm' ? ` on ${wasmThreads()} thread(s)` : ''}` },
    ...extra,
    { label: 'date', value: new Date().toISOString() },
  ];
}
