import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSystemHandler, PLAN_OPTIMIZERS, tf, trainingModel } from 'poptfjs';
import { parseVerbArguments, UsageError } from '../../bin/cli_arguments.js';
import { PLAN_OPTIMIZER_NAMES, VERBS } from '../../bin/verbs.js';
import { ROOT, runProgram } from '../run_program.js';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-verbs-'));
const savedModel = join(dir, 'saved');
const checkpoint = join(dir, 'state.ckpt');

beforeAll(async () => {
  mkdirSync(join(dir, 'cache'));
  const model = tf.sequential({ layers: [tf.layers.dense({ units: 8, inputShape: [4], name: 'hidden' }), tf.layers.dense({ units: 2, name: 'out' })] });
  model.compile({ optimizer: 'sgd', loss: 'meanSquaredError' });
  await model.save(fileSystemHandler(savedModel), { includeOptimizer: true });
  const trainer = trainingModel(model, { loss: 'mse' });
  tf.dispose(await trainer(tf.ones([1, 4]), tf.ones([1, 2])));
  trainer.saveCheckpoint(checkpoint);
  trainer.destroy();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  return runProgram('bin/poptfjs.ts', args);
}

/** Runs the command with tfjs refused: any import of it fails the program. */
function cliWithoutTfjs(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--import', './test/fixtures/cli/refuse_tfjs.mjs', 'bin/poptfjs.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A command line of each verb that does what it should (exit status 0), and what its output shows. */
const GOOD_RUNS: Record<string, { args: () => string[]; shows: RegExp }> = {
  env: { args: () => ['env'], shows: /^poptfjs +0\.\d+\.\d+\n@tensorflow\/tfjs +4\.22\.0\n/ },
  inspect: { args: () => ['inspect', checkpoint], shows: /^content +checkpoint$/m },
  'cache ls': { args: () => ['cache', 'ls', join(dir, 'cache')], shows: /^0 entries, 0 bytes in / },
  'cache clear': { args: () => ['cache', 'clear', join(dir, 'cache')], shows: /^removed 0 entries \(0 bytes\) from / },
  plan: { args: () => ['plan', savedModel, '--batch', '4', '--ipu', 'bow', '--optimizer', 'ADAM'], shows: /^fits on 1 IPU\(s\) per replica; /m },
  run: { args: () => ['run', '--num-instances', '1', '--num-replicas', '1', '--', process.execPath, '-e', 'console.log("instance ran")'], shows: /^\[0\] instance ran$/m },
};

describe('every verb of poptfjs', () => {
  it('has a good run in this test', () => {
    expect(Object.keys(GOOD_RUNS).sort()).toEqual(VERBS.map((v) => v.name).sort());
  });

  for (const verb of VERBS) {
    const words = verb.name.split(' ');
    it(`${verb.name}: --help and -h print its usage and flags on stdout, exit 0, and load no tfjs`, () => {
      for (const flag of ['--help', '-h']) {
        const { status, stdout, stderr } = cliWithoutTfjs(...words, flag);
        expect(stderr).toBe('');
        expect(status).toBe(0);
        expect(stdout).toMatch(new RegExp(`^usage: poptfjs ${verb.name}`));
        for (const f of verb.flags) expect(stdout).toContain(`--${f.name}`);
      }
      expect(cliWithoutTfjs('help', ...words).stdout).toMatch(new RegExp(`^usage: poptfjs ${verb.name}`));
    });

    it(`${verb.name}: a flag it does not take is a usage error (exit 2) named before tfjs loads`, () => {
      const { status, stdout, stderr } = cliWithoutTfjs(...words, '--bogus', ...(verb.command ? ['--', 'true'] : []));
      expect(stdout).toBe('');
      expect(status).toBe(2);
      expect(stderr).toContain(`poptfjs: ${verb.name}: unknown flag '--bogus'; poptfjs ${verb.name} takes `);
      expect(stderr).toContain(`(see 'poptfjs ${verb.name} --help')`);
    });

    it(`${verb.name}: a good run exits 0`, () => {
      const { status, stdout, stderr } = cli(...GOOD_RUNS[verb.name]!.args());
      expect(stderr).toBe('');
      expect(status).toBe(0);
      expect(stdout).toMatch(GOOD_RUNS[verb.name]!.shows);
    });
  }
});

describe('the poptfjs command line', () => {
  it('prints its version with --version, and its commands with --help, -h or help', () => {
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
    expect(cliWithoutTfjs('--version')).toEqual({ status: 0, stdout: `${version}\n`, stderr: '' });
    for (const args of [['--help'], ['-h'], ['help']]) {
      const { status, stdout } = cliWithoutTfjs(...args);
      expect(status).toBe(0);
      for (const verb of VERBS) expect(stdout).toMatch(new RegExp(`^  ${verb.name} +\\S`, 'm'));
    }
    const cache = cliWithoutTfjs('cache', '--help');
    expect(cache.status).toBe(0);
    expect(cache.stdout).toMatch(/^usage: poptfjs cache <ls\|clear> \[dir\]/);
  });

  it('exits 2 with the usage on stderr when the command line names no command, or an unknown one', () => {
    const cases: Array<[string[], string]> = [
      [[], 'poptfjs: give a command\nusage: poptfjs <command>'],
      [['bogus'], "poptfjs: unknown command 'bogus'\nusage: poptfjs <command>"],
      [['cache'], 'poptfjs: cache: expected ls or clear, got nothing\nusage: poptfjs cache <ls|clear>'],
      [['cache', 'rm'], "poptfjs: cache: expected ls or clear, got 'rm'\n"],
    ];
    for (const [args, message] of cases) {
      const { status, stdout, stderr } = cliWithoutTfjs(...args);
      expect(stdout).toBe('');
      expect(status).toBe(2);
      expect(stderr.startsWith(message)).toBe(true);
    }
  });

  it('checks values: integers, choices in any case, required flags and arguments, values given twice', () => {
    const verb = (name: string) => VERBS.find((v) => v.name === name)!;
    const cases: Array<[string, string[], string]> = [
      ['plan', ['m.json', '--batch', '0'], "--batch takes a positive integer, got '0'"],
      ['plan', ['m.json', '--batch', '2.5'], "--batch takes a positive integer, got '2.5'"],
      ['plan', ['m.json'], 'give --batch B: micro-batch size'],
      ['plan', ['--batch', '4'], 'give the model: poptfjs plan <model> --batch B [flags]'],
      ['plan', ['m.json', '--batch'], '--batch needs a value: --batch B'],
      ['plan', ['m.json', '--batch', '4', '--batch', '8'], '--batch is given twice'],
      ['plan', ['m.json', '--batch', '4', '--ipu', 'Mk3'], "--ipu takes GC200, Bow (in any case), got 'Mk3'"],
      ['plan', ['m.json', '--batch', '4', '--optimizer', 'adagrad'], "--optimizer takes sgd, adam, adamw, rmsprop, lamb (in any case), got 'adagrad'"],
      ['plan', ['m.json', '--batch', '4', '--loss', 'msqe'], '--loss takes meanSquaredError, meanAbsoluteError, '],
      ['plan', ['m.json', '--batch', '4', '--inference=yes'], "--inference takes no value, got 'yes'"],
      ['plan', ['a.json', 'b.json', '--batch', '4'], "unexpected argument 'b.json'"],
      ['inspect', [], 'give the file: poptfjs inspect <file>'],
      ['run', ['--num-instances', '2', '--num-replicas', '2'], 'give the command to run after --'],
      ['run', ['--num-instances', 'two', '--num-replicas', '2', '--', 'true'], "--num-instances takes a positive integer, got 'two'"],
    ];
    for (const [name, args, message] of cases) {
      expect(() => parseVerbArguments(verb(name), args), `${name} ${args.join(' ')}`).toThrow(UsageError);
      expect(() => parseVerbArguments(verb(name), args)).toThrow(message);
    }
    const plan = parseVerbArguments(verb('plan'), ['m.json', '--batch', '4', '--ipu', 'bow', '--optimizer', 'ADAM', '--loss', 'MSE', '--float16']);
    expect([
      plan.positionals,
      plan.integer('batch'),
      plan.string('ipu'),
      plan.string('optimizer'),
      plan.string('loss'),
      plan.boolean('float16'),
      plan.boolean('inference'),
    ]).toEqual([['m.json'], 4, 'Bow', 'adam', 'mse', true, false]);
    const run = parseVerbArguments(verb('run'), ['--num-instances', '2', '--num-replicas', '4', '--mpi-args', '--tag-output -iface eth0', '--', 'node', 'train.js', '--help']);
    expect([run.integer('num-instances'), run.string('mpi-args'), run.command]).toEqual([2, '--tag-output -iface eth0', ['node', 'train.js', '--help']]);
  });

  it('names a value error before tfjs loads, and exits 2', () => {
    for (const args of [
      ['plan', 'm.json', '--batch', '0'],
      ['run', '--num-instances', '2', '--num-replicas', '2'],
    ]) {
      const { status, stdout, stderr } = cliWithoutTfjs(...args);
      expect(stdout).toBe('');
      expect(stderr).toMatch(new RegExp(`^poptfjs: ${args[0]}: `));
      expect(status).toBe(2);
    }
  });

  it('the refusing hook does stop a program that loads tfjs, so the runs above did not load it', () => {
    const { status, stderr } = cliWithoutTfjs('env');
    expect(status).not.toBe(0);
    expect(stderr).toContain('tfjs was loaded');
  });

  it('plan --report DIR writes the HTML, JSON and Chrome trace reports and names each file on stderr', () => {
    const reports = join(dir, 'reports');
    const { status, stdout, stderr } = cli('plan', join(savedModel, 'model.json'), '--batch', '4', '--ipus', '2', '--report', reports);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^PipelinedExecution: 2 stage\(s\) on 2 IPU\(s\) per replica/m);
    const written = stderr.trim().split('\n');
    expect(written).toHaveLength(3);
    for (const [line, ending] of written.map((l, i) => [l, ['.html', '.json', '.trace.json'][i]!] as const)) {
      expect(line).toMatch(new RegExp(`^poptfjs plan: wrote ${reports}/\\S+-training${ending.replaceAll('.', '\\.')}$`));
      expect(readFileSync(line.replace('poptfjs plan: wrote ', ''), 'utf8').length).toBeGreaterThan(100);
    }
  });

  it("plan's optimizer names are the ones plan() builds", () => {
    expect([...PLAN_OPTIMIZER_NAMES].sort()).toEqual(Object.keys(PLAN_OPTIMIZERS).sort());
  });
});
