import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BeginBlock, compileGraph, inferenceModel, Options, PipelinedExecution, Stage, tf } from 'poptfjs';
import { readArchive } from '../../lib/files/ar_archive.js';
import type { LoweredVariables } from '../../lib/compile/lowered_variables.js';
import type { TileProgram } from '../../lib/compile/tile_programs.js';
import { regressor } from './engine_fixtures.js';

const dir = () => mkdtempSync(join(tmpdir(), 'poptfjs-compile-outputs-'));

/** The regressor with its two layers in blocks `b0` and `b1`, pipelined over two IPUs that reserve 64 I/O tiles each. */
function pipelinedRegressor(seed: number) {
  const model = regressor(seed);
  BeginBlock(model.layers[0]!, { userId: 'b0' });
  BeginBlock(model.layers[1]!, { userId: 'b1' });
  const options = new Options().deviceIterations(2).setExecutionStrategy(PipelinedExecution(Stage('b0').ipu(0), Stage('b1').ipu(1)));
  options.TensorLocations.numIOTiles(64);
  return inferenceModel(model, { options });
}

const member = (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as TileProgram;

describe('Files compiling writes (target.saveArchive, debug.loweredVarDumpFile, autoReport)', () => {
  afterEach(() => {
    delete process.env.POPLAR_ENGINE_OPTIONS;
  });

  it('target.saveArchive writes an ar archive with one member per range of tiles running the same program, read back verified', async () => {
    const folder = dir();
    const path = join(folder, 'sub', 'model.a');
    process.env.POPLAR_ENGINE_OPTIONS = JSON.stringify({ 'target.saveArchive': path });
    const executor = pipelinedRegressor(81);
    await executor.compile(tf.zeros([4, 5]));
    const members = readArchive(path);
    // Two IPUs of 1472 tiles, each with its last 64 as I/O tiles.
    expect(members.map((m) => m.name)).toEqual(['t0-1407', 't1408-1471', 't1472-2879', 't2880-2943']);
    const [compute0, io0, compute1] = members.map((m) => member(m.bytes));
    expect([compute0!.ipu, compute0!.role, compute0!.tiles]).toEqual([0, 'compute', [0, 1407]]);
    expect([io0!.ipu, io0!.role, io0!.tiles]).toEqual([0, 'io', [1408, 1471]]);
    // The compute tiles run the compute sets and syncs, the I/O tiles the transfers with the host.
    expect(new Set(compute0!.program.map((p) => p.kind))).not.toContain('host');
    expect(new Set(io0!.program.map((p) => p.kind))).toEqual(new Set(['host']));
    const { timeline, spec } = executor.executable.hardware;
    const computeOf = (ipu: number) => timeline.segments.filter((s) => s.ipu === ipu && s.kind === 'compute');
    expect(compute1!.program.filter((p) => p.kind === 'compute').map((p) => [p.name, p.cycles])).toEqual(
      computeOf(1).map((s) => [s.label, Math.round((s.end - s.start) * spec.clockHz)]),
    );
    // The second layer's 6×3 float32 kernel, 72 bytes, spread over IPU 1's 1408 compute tiles: 1 byte each, rounded up.
    const kernel = compute1!.variables.find((v) => v.kind === 'weights' && v.name.includes('kernel'))!;
    expect(kernel.bytesPerTile).toBe(Math.ceil(72 / 1408));
    expect(io0!.variables).toEqual([]);
    // A torn or altered archive is refused, naming what is wrong.
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 40));
    expect(() => readArchive(path)).toThrow(`${path}: the archive is corrupted or truncated (member 'sha256sums' holds`);
    const altered = Uint8Array.from(bytes);
    altered[200] = altered[200]! ^ 1;
    writeFileSync(path, altered);
    expect(() => readArchive(path)).toThrow("the archive is corrupted or truncated (member 't0-1407' does not match its checksum)");
    writeFileSync(path, 'not an archive');
    expect(() => readArchive(path)).toThrow(`${path}: not an ar archive (no '!<arch>' header)`);
    // A wrapper of the same model finds the executable in the cache, and still writes the archive compiling would have written.
    rmSync(path);
    await pipelinedRegressor(81).compile(tf.zeros([4, 5]));
    expect(readArchive(path)).toHaveLength(4);
    rmSync(folder, { recursive: true, force: true });
  });

  it("debug.loweredVarDumpFile writes each IPU's variables with their tiles and bytes per tile; autoReport.all writes both files to autoReport.directory", async () => {
    const folder = dir();
    const model = regressor(82);
    const executor = inferenceModel(model);
    await executor(tf.zeros([2, 5]));
    const vars = join(folder, 'vars.json');
    const executable = compileGraph({ graph: executor.executable.graph, modelName: 'regressor' }, undefined, { 'debug.loweredVarDumpFile': vars });
    const lowered = JSON.parse(readFileSync(vars, 'utf8')) as LoweredVariables;
    expect([lowered.model, lowered.kind, lowered.replicas, lowered.ipus.length]).toEqual(['regressor', 'inference', 1, 1]);
    expect(lowered.ipus[0]!.tiles).toEqual([0, 1471]);
    // The weights: 5×6 + 6 + 6×3 + 3 = 57 float32 values, 228 bytes.
    const weights = lowered.ipus[0]!.variables.filter((v) => v.kind === 'weights');
    expect(weights.reduce((n, v) => n + v.bytes, 0)).toBe(228);
    expect(weights.map((v) => v.bytesPerTile)).toEqual(weights.map((v) => Math.ceil(v.bytes / 1472)));
    expect(lowered.ipus[0]!.variables.reduce((n, v) => n + v.bytes, 0)).toBe(executable.hardware.memory.ipus[0]!.used);
    const reports = join(folder, 'reports');
    compileGraph({ graph: executor.executable.graph, modelName: 'regressor' }, undefined, {
      'autoReport.all': 'true',
      'autoReport.outputArchive': 'false',
      'autoReport.directory': reports,
    });
    expect(JSON.parse(readFileSync(join(reports, 'lowered_vars.json'), 'utf8')).model).toBe('regressor');
    expect(() => readArchive(join(reports, 'archive.a'))).toThrow('no such file');
    compileGraph({ graph: executor.executable.graph, modelName: 'regressor' }, undefined, { 'autoReport.all': 'true', 'autoReport.directory': reports });
    expect(readArchive(join(reports, 'archive.a')).map((m) => m.name)).toEqual(['t0-1471']);
    rmSync(folder, { recursive: true, force: true });
  });
});
