/**
 * Gives each test file a simulated IPU system of its own: the IPU locks of
 * its executors live in a fresh directory, so files running side by side (and
 * the programs they start, see `runProgram`) do not take each other's IPUs.
 * Tests of the locks between processes set `POPTFJS_IPU_LOCK_DIR` themselves.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.POPTFJS_IPU_LOCK_DIR = mkdtempSync(join(tmpdir(), 'poptfjs-test-ipus-'));
