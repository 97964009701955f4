/**
 * The official ONNX checker (Debian's python3-onnx), for tests of the models
 * poptfjs writes; `available` is false where it is not installed.
 */
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const PYTHON = '/usr/bin/python3';

/** Whether python3 with the onnx package is installed. */
export const onnxCheckerAvailable = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import onnx'], { encoding: 'utf8' }).status === 0;

/** Runs `onnx.checker.check_model` on a model file; returns the exit status and stderr. */
export function checkWithOnnx(path: string): { status: number | null; stderr: string } {
  return spawnSync(PYTHON, ['-c', 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]))', path], { encoding: 'utf8' });
}
