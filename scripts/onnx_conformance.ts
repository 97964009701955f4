/**
 * Runs the ONNX backend node tests and the pytorch-converted and
 * pytorch-operator tests of libonnx-testdata through the poptfjs importer and
 * prints one line per case (passed / failed / unsupported, with the reason)
 * and the totals per suite.
 *
 *     npx tsx scripts/onnx_conformance.ts [--failures] [--backend NAME] [FILTER...]
 *
 * FILTERs are substrings of case ids (`node/test_conv_with_strides_padding`);
 * `--failures` prints only the cases that did not pass. Exits 0 whatever the
 * results (it is a report; the test suite checks a fixed list of cases).
 */
import { initBackend } from '../lib/backend/backend_selection.js';
import { BACKEND_TEST_SUITES, INSTALL_HINT, backendTestDataInstalled, backendTestIds, runBackendTest, type BackendTestResult } from './onnx_backend_test.js';

const args = process.argv.slice(2);
const onlyFailures = args.includes('--failures');
const backendAt = args.indexOf('--backend');
const backend = backendAt >= 0 ? args[backendAt + 1] : undefined;
const filters = args.filter((a, i) => !a.startsWith('--') && (backendAt < 0 || i !== backendAt + 1));

if (!backendTestDataInstalled()) {
  console.error(INSTALL_HINT);
  process.exit(1);
}
console.log(`tfjs backend: ${await initBackend(backend)}`);

const results: BackendTestResult[] = [];
for (const suite of BACKEND_TEST_SUITES) {
  for (const id of backendTestIds(suite)) {
    if (filters.length > 0 && !filters.some((f) => id.includes(f))) continue;
    const result = runBackendTest(id);
    results.push(result);
    if (!onlyFailures || result.status !== 'passed') {
      console.log(`${result.status.padEnd(11)} ${id}${result.detail ? `  ${result.detail}` : ''}`);
    }
  }
}

console.log('');
console.log(`${'suite'.padEnd(20)} ${'passed'.padStart(7)} ${'failed'.padStart(7)} ${'unsupported'.padStart(12)} ${'total'.padStart(6)}`);
const row = (name: string, rows: BackendTestResult[]) => {
  const count = (status: BackendTestResult['status']) => rows.filter((r) => r.status === status).length;
  console.log(
    `${name.padEnd(20)} ${String(count('passed')).padStart(7)} ${String(count('failed')).padStart(7)} ${String(count('unsupported')).padStart(12)} ${String(rows.length).padStart(6)}`,
  );
};
for (const suite of BACKEND_TEST_SUITES)
  row(
    suite,
    results.filter((r) => r.id.startsWith(`${suite}/`)),
  );
row('total', results);
