/** The types of scripts/ops_index.mjs, which writes ops/index.ts from the files of ops/. */

/** The op files of ops/ (relative names, sorted): every `.ts` file directly in it but the index. */
export function opFiles(root: string): string[];

/** The text of ops/index.ts for the op files of the project at `root`. */
export function opsIndexText(root: string): string;

/** Writes ops/index.ts of the project at `root` (through a temporary file and a rename) when it differs from what the op files make. */
export function writeOpsIndex(root: string): void;
