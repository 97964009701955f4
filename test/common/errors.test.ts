import { describe, expect, it } from 'vitest';
import * as poptfjs from 'poptfjs';

describe('errors', () => {
  it('poptfjs.Error carries message, type and location', () => {
    const e = new poptfjs.Error('bad thing', { type: 'trace', location: 'dense_1' });
    expect(e).toBeInstanceOf(globalThis.Error);
    expect([e.message, e.type, e.location, e.name]).toEqual(['bad thing', 'trace', 'dense_1', 'PoptfjsError']);
    expect(String(e)).toBe('PoptfjsError [trace]: bad thing (at dense_1)');
  });

  it('recoverable errors say how to recover', () => {
    const e = new poptfjs.RecoverableError('link down', 'IPU_RESET');
    expect(e).toBeInstanceOf(poptfjs.Error);
    expect(e.recoveryAction).toBe('IPU_RESET');
    expect(e.type).toBe('poplar_recoverable_runtime_error');
  });

  it('unrecoverable errors and config file errors are poptfjs errors', () => {
    expect(new poptfjs.UnrecoverableError('dead')).toBeInstanceOf(poptfjs.Error);
    const c = new poptfjs.ConfigFileError('opts.conf', 3, 7, "unknown method 'foo'");
    expect([c.file, c.line, c.column, c.message]).toEqual(['opts.conf', 3, 7, "opts.conf:3:7: unknown method 'foo'"]);
    expect(c).toBeInstanceOf(poptfjs.Error);
  });
});
