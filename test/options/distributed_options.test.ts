import { afterEach, describe, expect, it, vi } from 'vitest';
import { Options } from '../../lib/options/index.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('Options.Distributed', () => {
  it('setEnvVarNames reads the process id and count from the variables it names', () => {
    vi.stubEnv('MY_PROCESSES', '4');
    vi.stubEnv('MY_PROCESS', '3');
    const opts = new Options({ fromEnvironment: false });
    expect(opts.Distributed.setEnvVarNames('MY_PROCESSES', 'MY_PROCESS')).toBe(opts.Distributed);
    expect(opts.settings.distributed).toEqual({ processId: 3, numProcesses: 4 });
  });

  it('setEnvVarNames takes a variable that is not set as process 0 of 1, as PopTorch does', () => {
    const opts = new Options({ fromEnvironment: false });
    opts.Distributed.configureProcessId(1, 2).setEnvVarNames('POPTFJS_TEST_UNSET_SIZE', 'POPTFJS_TEST_UNSET_RANK');
    expect(opts.settings.distributed).toEqual({ processId: 0, numProcesses: 1 });
  });

  it('setEnvVarNames refuses values that are not a process id below the count, naming the variable', () => {
    const opts = new Options({ fromEnvironment: false });
    vi.stubEnv('MY_PROCESSES', '2');
    vi.stubEnv('MY_PROCESS', 'one');
    expect(() => opts.Distributed.setEnvVarNames('MY_PROCESSES', 'MY_PROCESS')).toThrow(
      new RangeError("Options.Distributed.setEnvVarNames: MY_PROCESS must be an integer of at least 0, got 'one'"),
    );
    vi.stubEnv('MY_PROCESS', '2');
    expect(() => opts.Distributed.setEnvVarNames('MY_PROCESSES', 'MY_PROCESS')).toThrow(
      new RangeError('Options.Distributed.setEnvVarNames: MY_PROCESS (2) must be less than MY_PROCESSES (2)'),
    );
    vi.stubEnv('MY_PROCESSES', '0');
    expect(() => opts.Distributed.setEnvVarNames('MY_PROCESSES', 'MY_PROCESS')).toThrow(
      new RangeError("Options.Distributed.setEnvVarNames: MY_PROCESSES must be an integer of at least 1, got '0'"),
    );
    expect(() => opts.Distributed.setEnvVarNames('', 'MY_PROCESS')).toThrow('Options.Distributed.setEnvVarNames: varNumProcesses: expected a non-empty string');
    expect(opts.settings.distributed).toEqual({ processId: 0, numProcesses: 1 });
  });

  it("new options read Open MPI's process id and count, as PopTorch's do; disable() runs as one process again", () => {
    vi.stubEnv('OMPI_COMM_WORLD_SIZE', '3');
    vi.stubEnv('OMPI_COMM_WORLD_RANK', '2');
    const opts = new Options();
    expect(opts.settings.distributed).toEqual({ processId: 2, numProcesses: 3 });
    expect(new Options({ fromEnvironment: false }).settings.distributed).toEqual({ processId: 0, numProcesses: 1 });
    opts.Distributed.disable();
    expect(opts.settings.distributed).toEqual({ processId: 0, numProcesses: 1 });
    vi.stubEnv('POPTFJS_DEFAULT_OPTIONS', JSON.stringify({ distributed: { processId: 0, numProcesses: 2 } }));
    expect(new Options().settings.distributed).toEqual({ processId: 0, numProcesses: 2 });
  });

  it('setEnvVarNames is refused on frozen options', () => {
    const opts = new Options({ fromEnvironment: false });
    opts.freeze();
    expect(() => opts.Distributed.setEnvVarNames('A', 'B')).toThrow(/Options\.Distributed\.setEnvVarNames/);
  });
});
