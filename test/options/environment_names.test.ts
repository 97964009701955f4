/**
 * PopTorch's and Poplar's names for poptfjs's environment variables, read
 * when poptfjs's own is unset, and Poplar engine options from the
 * environment acting on every executor (or refused when Poplar has no such
 * option).
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigFileError, Options, getLogger, inferenceModel } from 'poptfjs';
import { environmentSetting } from '../../lib/common/environment.js';
import { configureLoggingFromEnv } from '../../lib/common/log.js';
import { waitForIpus } from '../../lib/ipu/ipu_locks.js';
import { environmentEngineSettings, withEngineOptions } from '../../lib/options/engine_options.js';

const VARIABLES = ['POPTFJS_CACHE_DIR', 'POPTORCH_CACHE_DIR', 'POPTORCH_IPU_MODEL', 'POPTORCH_WAIT_FOR_IPU', 'POPTFJS_ENGINE_OPTIONS', 'POPLAR_ENGINE_OPTIONS'];

afterEach(() => {
  for (const v of VARIABLES) delete process.env[v];
  configureLoggingFromEnv({});
});

describe("PopTorch's environment variables", () => {
  it("are read when poptfjs's own is unset, and poptfjs's wins", () => {
    expect(environmentSetting('POPTFJS_CACHE_DIR', { POPTORCH_CACHE_DIR: '/a' })).toEqual({ variable: 'POPTORCH_CACHE_DIR', value: '/a' });
    expect(environmentSetting('POPTFJS_CACHE_DIR', { POPTORCH_CACHE_DIR: '/a', POPTFJS_CACHE_DIR: '/b' })).toEqual({ variable: 'POPTFJS_CACHE_DIR', value: '/b' });
    expect(environmentSetting('POPTFJS_CACHE_DIR', {})).toBeUndefined();
  });

  it('POPTORCH_CACHE_DIR and POPTORCH_IPU_MODEL set the options; a bad value is refused by name', () => {
    process.env.POPTORCH_CACHE_DIR = '/tmp/poptorch-cache';
    process.env.POPTORCH_IPU_MODEL = '1';
    const settings = new Options().settings;
    expect(settings.executableCachePath).toBe('/tmp/poptorch-cache');
    expect(settings.useIpuModel).toBe(true);
    process.env.POPTORCH_IPU_MODEL = 'yes';
    expect(() => new Options()).toThrow(/POPTORCH_IPU_MODEL.*"0", "1"/);
  });

  it("POPTORCH_LOG_LEVEL sets the level of PopTorch's modules, and POPTORCH_WAIT_FOR_IPU the wait for busy IPUs", () => {
    configureLoggingFromEnv({ POPTORCH_LOG_LEVEL: 'DEBUG' });
    expect(getLogger('poptfjs').getLevel()).toBe('DEBUG');
    configureLoggingFromEnv({ POPTORCH_LOG_LEVEL: 'DEBUG', POPTFJS_LOG_LEVEL: 'ERR' });
    expect(getLogger('poptfjs').getLevel()).toBe('ERR');
    expect(waitForIpus()).toBe(false);
    process.env.POPTORCH_WAIT_FOR_IPU = '1';
    expect(waitForIpus()).toBe(true);
  });
});

describe('engine options from the environment', () => {
  it("POPLAR_ENGINE_OPTIONS is read when POPTFJS_ENGINE_OPTIONS is unset; Poplar's options act on an executor's settings", () => {
    const env = {
      POPLAR_ENGINE_OPTIONS: '{"autoReport.all":"true","autoReport.directory":"./r","debug.allowOutOfMemory":"true","prng.seed":"42","prng.enableStochasticRounding":true}',
    };
    const settings = withEngineOptions(new Options({ fromEnvironment: false }).settings, env);
    expect(settings.profileDir).toBe('./r');
    expect(settings.allowOutOfMemory).toBe(true);
    expect(settings.randomSeed).toBe(42);
    expect(settings.precision.stochasticRounding).toBe(true);
    // The environment's report directory wins over the program's own, as Poplar applies POPLAR_ENGINE_OPTIONS over a program's options.
    const own = new Options({ fromEnvironment: false }).enableProfiling('./mine');
    expect(withEngineOptions(own.settings, env).profileDir).toBe('./r');
    expect(withEngineOptions(own.settings, {}).profileDir).toBe('./mine');
  });

  it('refuses an option Poplar does not have, a bad value or text that is not a JSON object, naming the variable', () => {
    expect(() => environmentEngineSettings({ POPLAR_ENGINE_OPTIONS: '{"autoReport.everything":"true"}' })).toThrow(ConfigFileError);
    expect(() => environmentEngineSettings({ POPLAR_ENGINE_OPTIONS: '{"autoReport.everything":"true"}' })).toThrow(
      /POPLAR_ENGINE_OPTIONS: 'autoReport\.everything' is not a Poplar engine option; the options are .*autoReport\.all/,
    );
    expect(() => environmentEngineSettings({ POPTFJS_ENGINE_OPTIONS: '{"debug.allowOutOfMemory":"maybe"}' })).toThrow(
      `POPTFJS_ENGINE_OPTIONS['debug.allowOutOfMemory'] is 'maybe'; expected "true" or "false"`,
    );
    expect(() => environmentEngineSettings({ POPTFJS_ENGINE_OPTIONS: '["autoReport.all"]' })).toThrow(/expected a JSON object of engine options/);
    expect(() => environmentEngineSettings({ POPTFJS_ENGINE_OPTIONS: '{autoReport' })).toThrow(/not valid JSON/);
  });

  it('POPLAR_ENGINE_OPTIONS with autoReport.all writes the reports of a compile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-poplar-reports-'));
    process.env.POPLAR_ENGINE_OPTIONS = JSON.stringify({ 'autoReport.all': 'true', 'autoReport.directory': dir });
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3], name: 'reported' })] });
    const executor = inferenceModel(model);
    await executor.compile(tf.ones([1, 3]));
    // The compilation reports, and the archive and lowered variables compiling writes.
    expect(readdirSync(dir).sort()).toEqual([
      'archive.a',
      'lowered_vars.json',
      `${model.name}-inference.html`,
      `${model.name}-inference.json`,
      `${model.name}-inference.trace.json`,
    ]);
    expect(existsSync(join(dir, `${model.name}-inference.json`))).toBe(true);
    expect(executor.getSummaryReport()).not.toContain('Execution profiling not enabled');
    executor.destroy();
    model.dispose();
  });
});
