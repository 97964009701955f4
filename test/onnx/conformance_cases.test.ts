import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../lib/backend/backend_selection.js';
import { INSTALL_HINT, backendTestDataInstalled, runBackendTest } from '../../scripts/onnx_backend_test.js';

// A fixed list of ONNX backend test cases (libonnx-testdata): a few per operator poptfjs claims.
const CASES = readFileSync(fileURLToPath(new URL('../fixtures/onnx/conformance_cases.txt', import.meta.url)), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

const installed = backendTestDataInstalled();
if (!installed) console.warn(`skipping the ONNX conformance cases: ${INSTALL_HINT}`);

describe.skipIf(!installed)('ONNX backend conformance cases', () => {
  beforeAll(async () => {
    await initBackend();
  });

  it('has a case list', () => {
    expect(CASES.length).toBeGreaterThan(100);
  });

  for (const id of CASES) {
    it(id, () => {
      const result = runBackendTest(id);
      expect(result.detail).toBe('');
      expect(result.status).toBe('passed');
    });
  }
});
