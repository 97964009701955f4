import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getLogger, setLogDestination, setLogLevel, setPopartLogLevel } from 'poptfjs';
import { configureLoggingFromEnv } from '../../lib/common/log.js';

const LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z poptfjs:(\w+) (\d+)\.(\d+) ([TDIWEC]): (.*)$/;

function captureStderr(): { lines: () => string[]; restore: () => void } {
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  return { lines: () => chunks.join('').split('\n').filter(Boolean), restore: () => spy.mockRestore() };
}

afterEach(() => {
  configureLoggingFromEnv({});
});

describe('logging', () => {
  it('writes lines in PopART format to stderr, at WARN and above by default', () => {
    configureLoggingFromEnv({});
    const stderr = captureStderr();
    const stdout = vi.spyOn(process.stdout, 'write');
    getLogger('session').info('not shown');
    getLogger('session').warn('shown');
    getLogger('ir').error('bad graph');
    stderr.restore();
    expect(stdout).not.toHaveBeenCalled();
    stdout.mockRestore();
    const lines = stderr.lines();
    expect(lines).toHaveLength(2);
    const [, module, pid, , level, message] = LINE.exec(lines[0]!)!;
    expect([module, Number(pid), level, message]).toEqual(['session', process.pid, 'W', 'shown']);
    expect(LINE.exec(lines[1]!)!.slice(4)).toEqual(['E', 'bad graph']);
  });

  it("sets PopTorch's modules with setLogLevel, PopART's with setPopartLogLevel, and one module with getLogger(module).setLevel", () => {
    const stderr = captureStderr();
    setLogLevel('DEBUG');
    getLogger('trace').debug('trace debug');
    getLogger('pattern').debug('not shown: PopART module at WARN');
    setPopartLogLevel('DEBUG');
    getLogger('devicex').setLevel('OFF');
    getLogger('pattern').debug('pattern debug');
    getLogger('devicex').critical('never');
    stderr.restore();
    expect(stderr.lines().map((l) => LINE.exec(l)!.slice(1, 2).concat(LINE.exec(l)!.slice(4)))).toEqual([
      ['trace', 'D', 'trace debug'],
      ['pattern', 'D', 'pattern debug'],
    ]);
  });

  it("takes PopTorch's legacy integer levels and level names, with PopTorch's errors (misc_test.py: test_set_log_level, test_set_popart_log_level)", () => {
    for (const [level, name] of [
      [0, 'TRACE'],
      [1, 'DEBUG'],
      [2, 'INFO'],
      [3, 'WARN'],
      [4, 'ERR'],
    ] as const) {
      setLogLevel(level);
      expect(getLogger().getLevel()).toBe(name);
    }
    expect(() => setLogLevel(5)).toThrow('setLogLevel: Invalid log level integer 5');
    for (const name of ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERR', 'OFF']) setLogLevel(name);
    expect(() => setLogLevel('wibble')).toThrow('setLogLevel: Unknown log level: wibble. Valid values are CRITICAL, DEBUG, ERR, INFO, OFF, TRACE and WARN');
    expect(() => setPopartLogLevel(0 as never)).toThrow('setPopartLogLevel: Level must be one of TRACE, TRACE_ALL, DEBUG, DEBUG_IR, INFO, WARN, ERR, OFF, got 0');
    expect(() => setPopartLogLevel('FOO')).toThrow(/^setPopartLogLevel: Level must be one of/);
    setPopartLogLevel('DEBUG_IR');
    expect([getLogger('session').getLevel(), getLogger('data').getLevel()]).toEqual(['DEBUG', 'OFF']);
  });

  it("reads POPTORCH_LOG_LEVEL for PopTorch's modules and POPART_LOG_LEVEL for PopART's, WARN each by default; POPTFJS_LOG_LEVEL sets both", () => {
    configureLoggingFromEnv({ POPTORCH_LOG_LEVEL: 'DEBUG' });
    expect([getLogger().getLevel(), getLogger('options').getLevel(), getLogger('session').getLevel()]).toEqual(['DEBUG', 'DEBUG', 'WARN']);
    configureLoggingFromEnv({ POPART_LOG_LEVEL: 'INFO' });
    expect([getLogger().getLevel(), getLogger('ir').getLevel(), getLogger('op').getLevel()]).toEqual(['WARN', 'INFO', 'INFO']);
    configureLoggingFromEnv({ POPTORCH_LOG_LEVEL: 'DEBUG', POPART_LOG_LEVEL: 'INFO', POPTFJS_LOG_LEVEL: 'ERR' });
    expect([getLogger().getLevel(), getLogger('ir').getLevel()]).toEqual(['ERR', 'ERR']);
  });

  it('the root logger sets all modules', () => {
    getLogger('transform').setLevel('ERR');
    getLogger().setLevel('TRACE');
    expect(getLogger('transform').getLevel()).toBe('TRACE');
    expect(getLogger('anything').isEnabled('TRACE')).toBe(true);
  });

  it('reads POPTFJS_LOG_LEVEL and POPTFJS_LOG_DEST, and writes to a file', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'poptfjs-log-')), 'log.txt');
    configureLoggingFromEnv({ POPTFJS_LOG_LEVEL: 'info', POPTFJS_LOG_DEST: file });
    getLogger('builder').info('to the file');
    getLogger('builder').debug('filtered');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(LINE.exec(lines[0]!)!.slice(1, 2)).toEqual(['builder']);
    expect(lines[0]).toMatch(/ I: to the file$/);
  });

  it('writes to stdout only when asked', () => {
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    setLogDestination('stdout');
    getLogger('op').warn('on stdout');
    const written = stdout.mock.calls.map((c) => String(c[0]));
    stdout.mockRestore();
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/poptfjs:op .* W: on stdout/);
  });

  it('rejects unknown levels with the accepted ones', () => {
    expect(() => getLogger('ir').setLevel('LOUD')).toThrow("unknown log level 'LOUD'; expected one of TRACE, DEBUG, INFO, WARN, ERR, CRITICAL, OFF");
    expect(() => configureLoggingFromEnv({ POPTFJS_LOG_LEVEL: 'chatty' })).toThrow(/POPTFJS_LOG_LEVEL: unknown log level 'chatty'/);
  });

  it('evaluates message thunks only when the level is enabled', () => {
    const thunk = vi.fn(() => 'expensive');
    getLogger('ces').debug(thunk);
    expect(thunk).not.toHaveBeenCalled();
  });
});
