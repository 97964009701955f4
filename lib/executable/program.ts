/**
 * The programs of an executable, run by index as Poplar's `Engine::run(prog)`
 * runs them: what PopART builds for a model (the weights from the host, the
 * optimizer's values from the host, the step, the weights to the host), each
 * named by what it does.
 */
import { PoptfjsError } from '../common/errors.js';

/** What each program does. */
export const PROGRAM_NAMES = ['weightsFromHost', 'optimizerFromHost', 'step', 'weightsToHost'] as const;

/**
 * A program of an executable:
 * - `weightsFromHost`: copies each weight from its host stream to every replica;
 * - `optimizerFromHost`: copies the optimizer's current values (learning rate, ...) from the host;
 * - `step`: one call of the model: reads its inputs from their streams, runs
 *   `deviceIterations × replicas × gradientAccumulation` micro-batches (training: updating the weights) and
 *   writes its outputs to theirs;
 * - `weightsToHost`: copies each weight (replica 0's) to its host stream.
 */
export type ProgramName = (typeof PROGRAM_NAMES)[number];

/** A program of an executable and the index `Engine.run` takes. */
export interface ExecutableProgram {
  readonly index: number;
  readonly name: ProgramName;
}

/** The programs of a compiled model, as PopART builds them: training has `optimizerFromHost`, inference does not. */
export function modelPrograms(kind: 'training' | 'inference'): ProgramName[] {
  return kind === 'training' ? ['weightsFromHost', 'optimizerFromHost', 'step', 'weightsToHost'] : ['weightsFromHost', 'step', 'weightsToHost'];
}

/**
 * The programs `names` as an executable lists them; an error for an unknown
 * name, a repeated one, `optimizerFromHost` in inference, or an empty list.
 */
export function executablePrograms(names: readonly string[], kind: 'training' | 'inference', where: string): ExecutableProgram[] {
  if (names.length === 0) throw new PoptfjsError(`${where}: no programs; give at least one of ${PROGRAM_NAMES.join(', ')}`, { type: 'options' });
  return names.map((name, index) => {
    if (!(PROGRAM_NAMES as readonly string[]).includes(name)) {
      throw new PoptfjsError(`${where}: program ${index} is '${name}'; the programs are ${PROGRAM_NAMES.join(', ')}`, { type: 'options' });
    }
    if (names.indexOf(name) !== index) throw new PoptfjsError(`${where}: program '${name}' is listed twice (at ${names.indexOf(name)} and ${index})`, { type: 'options' });
    if (name === 'optimizerFromHost' && kind === 'inference') {
      throw new PoptfjsError(`${where}: program ${index} is 'optimizerFromHost', but an inference graph has no optimizer`, { type: 'options' });
    }
    return { index, name: name as ProgramName };
  });
}
