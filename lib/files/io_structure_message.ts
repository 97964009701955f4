/**
 * An executable's {@link IoStructure} as stored in its file: lossless JSON,
 * checked when read against the signature and the outputs it describes.
 */
import { PoptfjsError } from '../common/errors.js';
import { checkedStructure, tensorCount } from '../trace/nested_values.js';
import type { IoStructure } from '../executable/executable.js';
import { parseLossless, stringifyLossless } from '../proto/lossless_json.js';

/** `structure` as the text of `io_structure_json`. */
export function ioStructureJson(structure: IoStructure): string {
  return stringifyLossless(structure);
}

/**
 * The structure stored as `text`, checked to hold `inputCount` input and
 * `outputCount` output tensors; an error naming `where` otherwise.
 */
export function ioStructureFromJson(text: string, inputCount: number, outputCount: number, where: string): IoStructure {
  const parsed = parseLossless(text, `${where} input and output structure`) as { inputs?: unknown; outputs?: unknown } | null;
  if (parsed === null || typeof parsed !== 'object' || !Array.isArray(parsed.inputs)) {
    throw new PoptfjsError(`${where}: the structure of the inputs or outputs is malformed`, { type: 'file' });
  }
  const structure: IoStructure = { inputs: parsed.inputs.map((s) => checkedStructure(s, where)), outputs: checkedStructure(parsed.outputs, where) };
  const inputs = structure.inputs.reduce((n, s) => n + tensorCount(s), 0);
  const outputs = tensorCount(structure.outputs);
  if (inputs !== inputCount || outputs !== outputCount) {
    throw new PoptfjsError(
      `${where}: the structure of the inputs and outputs holds ${inputs} input and ${outputs} output tensor(s), but the executable takes ${inputCount} and returns ${outputCount}`,
      { type: 'file' },
    );
  }
  return structure;
}
