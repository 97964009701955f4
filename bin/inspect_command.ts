/** `poptfjs inspect <file>`: what an exported executable or a checkpoint holds, without running it. */
import { describePoptfjsFile } from 'poptfjs';
import type { VerbArguments } from './cli_arguments.js';

/** Prints the description of the file the arguments name. */
export function inspectCommand(args: VerbArguments): number {
  console.log(describePoptfjsFile(args.positionals[0]!));
  return 0;
}
