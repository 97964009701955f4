/**
 * Poplar's Engine over the simulated IPU: a model trained with
 * `trainingModel` is exported, and a fresh process loads its executable into
 * an `Engine`, connects the step's streams, runs the step program a few
 * times, reads a weight back, prints the profile summary and the intervals
 * CSV, then simulates an error where the step runs and recovers as Poplar's
 * reference describes (clear the errors, load again, run). Last, the engine
 * option `debug.trace` traces one step to a file: each compute set, then the
 * values each of its kernels read and made.
 *
 *     npx tsx examples/poplar-engine.ts
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeviceManager, Engine, Executable, type PoplarRuntimeError, SimulatedErrorCode, optim, tf, trainingModel } from 'poptfjs';

/** Trains a small regressor for a few steps and exports its executable with the model to `path`. */
async function trainAndExport(path: string): Promise<void> {
  const model = tf.sequential({ layers: [tf.layers.dense({ units: 3, inputShape: [4], kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) })] });
  const training = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
  const x = tf.randomNormal([2, 4], 0, 1, 'float32', 2);
  const y = tf.randomNormal([2, 3], 0, 1, 'float32', 3);
  for (let step = 0; step < 3; step++) await training(x, y);
  await training.compileAndExport(path, x, y);
  console.log(`exported the trained executable to ${path}`);
}

/** Loads the executable of `path` into an engine and drives it at the Poplar level. */
function runEngine(path: string): void {
  const executable = Executable.fromFile(path);
  console.log(`programs: ${executable.programs.map((p) => `${p.index} ${p.name}`).join(', ')}`);
  const engine = new Engine(executable, { 'debug.instrument': 'true' });
  console.log(`streams: ${engine.listStreams().join(' ')}`);
  const device = new DeviceManager().createIpuModelDevice();
  engine.load(device);
  // One host batch of two samples, read anew by every run (a circular buffer of one run's transfers).
  engine.connectStream('input0', Float32Array.from([0.5, -1, 0.25, 2, -0.5, 1, 0.75, -2]));
  engine.connectStream('input1', Float32Array.from([1, 0, -1, 0.5, 0.5, 0.5]));
  const output = new Float32Array(6);
  const loss = new Float32Array(1);
  engine.connectStream('output0', output);
  engine.connectStream('loss', loss);
  const step = engine.programIndex('step');
  const start = engine.getTimeStamp();
  for (let run = 0; run < 3; run++) {
    engine.run(step, `step ${run}`);
    console.log(`step ${run}: loss ${loss[0]!.toFixed(6)}`);
  }
  process.stdout.write(Engine.reportTiming(start, engine.getTimeStamp()));
  const [kernelName] = engine.executable.graph.values.flatMap((v) => (v.source.kind === 'param' && v.shape.length === 2 ? [v.source.name] : []));
  const kernel = new Float32Array(12);
  engine.readTensor(kernelName!, kernel);
  console.log(`${kernelName}: [${Array.from(kernel, (w) => w.toFixed(4)).join(', ')}]`);
  engine.printProfileSummary(process.stdout, { showExecutionSteps: 'true' });
  console.log('intervals (begin,end,compute tiles,exchange tiles,sync tiles):');
  engine.reportIntervals(process.stdout);

  // Poplar's example: an error simulated where the step's matrix product runs.
  const [location] = engine.getSimulatedErrorLocations('BatchMatMul', 0);
  engine.insertSimulatedError(SimulatedErrorCode.MEMORY_ERROR, location!);
  try {
    engine.run(step);
  } catch (exception) {
    const { errors } = exception as PoplarRuntimeError;
    console.log(`caught: ${errors.length} error, simulated ${errors[0]!.isSimulated}, code ${errors[0]!.code}, at the location planted ${errors[0]!.location === location}`);
    console.log(`ErrorCode: ${(exception as Error).message}`);
  }
  // That device is out of service. A recoverable error, on another: clear the simulated errors, load again, run from the beginning.
  const recovering = new Engine(executable);
  recovering.connectStream('input0', Float32Array.from([0.5, -1, 0.25, 2, -0.5, 1, 0.75, -2]));
  recovering.connectStream('input1', Float32Array.from([1, 0, -1, 0.5, 0.5, 0.5]));
  recovering.connectStream('output0', output);
  recovering.connectStream('loss', loss);
  const fresh = new DeviceManager().createIpuModelDevice();
  recovering.load(fresh);
  recovering.insertSimulatedError(SimulatedErrorCode.IPU_RESET, recovering.getSimulatedErrorLocations('F0')[0]!);
  try {
    recovering.run(step);
  } catch (exception) {
    console.log(`caught: ${(exception as Error).message}`);
  }
  recovering.clearSimulatedErrors();
  recovering.load();
  recovering.run(step);
  console.log(`after clearSimulatedErrors and load: loss ${loss[0]!.toFixed(6)}`);

  // debug.trace: each compute set and the values its kernels read and made, to debug.traceFile (else stderr).
  const traceFile = join(dirname(path), 'step.trace');
  const traced = new Engine(executable, { 'debug.trace': 'true', 'debug.traceFile': traceFile });
  traced.load(new DeviceManager().createIpuModelDevice());
  traced.connectStream('input0', Float32Array.from([0.5, -1, 0.25, 2, -0.5, 1, 0.75, -2]));
  traced.connectStream('input1', Float32Array.from([1, 0, -1, 0.5, 0.5, 0.5]));
  traced.connectStream('output0', output);
  traced.connectStream('loss', loss);
  traced.run(step);
  const trace = readFileSync(traceFile, 'utf8').split('\n');
  console.log(`the trace of one step (${trace.length - 1} lines), its first lines:\n${trace.slice(0, 12).join('\n')}`);
}

const file = process.argv[2];
if (file === undefined) {
  const path = join(mkdtempSync(join(tmpdir(), 'poptfjs-engine-')), 'trained.poptfjs');
  await trainAndExport(path);
  // A fresh process loads it: nothing of the model but the file.
  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), path], { stdio: 'inherit' });
  process.exitCode = child.status ?? 1;
} else {
  runEngine(file);
}
